"""How results point back at what produced them: paths as the user gave them, and the
``dpverify check`` command that re-runs one claim at one point."""
from __future__ import annotations

import os
import shlex
from typing import Optional

from .options import Options


def relative(path: str) -> str:
    """Show paths relative to the working directory when they are inside it."""
    try:
        return os.path.relpath(path) if os.path.isabs(path) and not os.path.relpath(path).startswith("..") else path
    except ValueError:
        return path


def replay_command(path: str, spec: str, claim: str, params: dict[str, str],
                   options: Optional[Options] = None) -> str:
    """The ``dpverify check`` command that re-runs one claim at one point with the same options,
    quoted for a shell."""
    words = ["dpverify", "check", path, "--spec", spec, "--claim", claim]
    for name, value in params.items():
        words += ["--point", f"{name}={value}"]
    default = Options()
    if options is not None and options.precision != default.precision:
        words += ["--precision", str(options.precision)]
    if options is not None and options.max_work != default.max_work:
        words += ["--max-work", str(options.max_work)]
    if options is not None and options.proofs != default.proofs:
        words.append("--no-proofs")
    return " ".join(shlex.quote(w) for w in words)
