"""MkDocs hook: put the command line's own help texts into the pages at build time.

A page line ``<!-- help: dpverify check -->`` becomes a code block holding exactly what
``dpverify check --help`` prints (from click, in process), and ``<!-- help: pytest -->`` the
options the pytest plugin adds (from the plugin's ``pytest_addoption``).  So the reference of the
options is never out of date: it is the code's.
"""
from __future__ import annotations

import re

import click

HELP = re.compile(r"^<!-- help: (?P<command>[a-z -]+?) -->$", re.M)


def _click_help(words: list[str]) -> str:
    from dpverify.cli import main
    command: click.Command = main
    names = ["dpverify"]
    for word in words:
        assert isinstance(command, click.Group), words
        command = command.commands[word]
        names.append(word)
    with click.Context(command, info_name=" ".join(names), terminal_width=80, max_content_width=80) as ctx:
        return command.get_help(ctx)


def _pytest_help() -> str:
    from dpverify import pytest_plugin

    lines: list[str] = []

    class Group:
        def addoption(self, *names: str, **kwargs: object) -> None:
            text = " ".join(str(kwargs.get("help", "")).split())
            metavar = kwargs.get("metavar") or (names[0].lstrip("-").split("-")[-1].upper())
            lines.append(f"{', '.join(names)}={metavar}\n    {text}")

    class Parser:
        def getgroup(self, name: str, description: str = "") -> Group:
            return Group()

        def addini(self, *args: object, **kwargs: object) -> None:
            pass

    pytest_plugin.pytest_addoption(Parser())  # type: ignore[arg-type]
    return "\n".join(lines)


def _help(command: str) -> str:
    words = command.split()
    text = _pytest_help() if words == ["pytest"] else _click_help(words[1:])
    return "```text\n" + text.rstrip() + "\n```"


def on_page_markdown(markdown: str, **kwargs: object) -> str:
    return HELP.sub(lambda m: _help(m.group("command")), markdown)
