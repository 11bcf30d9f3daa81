"""The progress of ``dpverify check`` and ``dpverify report`` on stderr, in one of two forms.

* :class:`Bar` -- on a terminal: a rich progress bar, first over the spec files being loaded, then
  over the claim points (the total known before any is checked), with the files done, the time
  elapsed and an estimate of the time left.
* :class:`Lines` -- anywhere else (a CI log, a pipe, a file): plain lines, one when loading starts,
  one when the work is known, one per finished spec file with its counts and seconds, and a
  heartbeat naming the files still being checked whenever :data:`HEARTBEAT` seconds passed without a
  line (also while one slow file is being loaded), so a log is never silent for longer.

Both receive the hooks of :class:`dpverify.runner.Progress` (this module does not import the
runner: the layers keep reports and the runner apart).  Nothing here decides a verdict, and none of
it goes to stdout: ``--json`` stays one JSON document.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Optional

from ..results import SpecReport
from .summary import tally

HEARTBEAT = 5.0
"""Seconds of silence after which :class:`Lines` says what is still running."""

PREFIX = "dpverify: "


def clock_text(seconds: float) -> str:
    """``"1:05"`` (minutes and seconds), ``"1:02:03"`` beyond an hour."""
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def seconds_text(seconds: float) -> str:
    """``"4.2 s"`` under a minute, else :func:`clock_text`."""
    return f"{seconds:.1f} s" if seconds < 60 else clock_text(seconds)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def file_words(reports: list[SpecReport]) -> str:
    """What one finished file came to: ``"14 points: 8 proved, 6 verified"``, or its error's first line."""
    errors = [r.error for r in reports if r.error]
    points = tally(reports).points
    words = f"{_plural(points.total, 'point')}: {points.words()}" if points.total else ""
    if errors:
        first = errors[0].strip().splitlines()[0] if errors[0].strip() else "error"
        shown = first if len(first) <= 160 else first[:157] + "..."
        return (words + "; " if words else "") + f"ERROR: {shown}"
    return words or "no points"


class _State:
    """What both forms count: files and points planned and done, and what is running."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.began = clock()
        self.checking_since: Optional[float] = None
        self.files = 0
        self.files_done = 0
        self.points = 0
        self.points_done = 0
        self.planned: dict[str, int] = {}
        self.running: dict[str, list[Any]] = {}  # path -> [points done, started at]

    def plan(self, plan: list[tuple[str, int]]) -> None:
        self.planned = dict(plan)
        self.files, self.points = len(plan), sum(n for _, n in plan)
        self.checking_since = self.clock()

    def eta(self) -> Optional[float]:
        """Seconds left at the rate of the points done so far (None before the first point)."""
        if not self.points_done or self.checking_since is None:
            return None
        spent = self.clock() - self.checking_since
        return spent / self.points_done * (self.points - self.points_done)


class Lines:
    """Progress as log lines on ``stream`` (see the module's docstring).  ``clock`` and ``heartbeat``
    are for tests."""

    def __init__(self, stream: Any, clock: Callable[[], float] = time.monotonic, heartbeat: float = HEARTBEAT,
                 jobs: int = 1) -> None:
        self.stream = stream
        self.state = _State(clock)
        self.heartbeat = heartbeat
        self.jobs = jobs
        self.last = clock()
        self.lock = threading.Lock()
        self.loading_path: Optional[str] = None
        self.loading_since = self.last
        self.loads: dict[str, float] = {}  # files workers are loading, since when
        self.busy_with: Optional[str] = None  # what this process is doing while it cannot tick
        self._stop: Optional[threading.Event] = None
        self._thread: Optional[threading.Thread] = None

    def write(self, text: str) -> None:
        with self.lock:
            try:
                self.stream.write(PREFIX + text + "\n")
                self.stream.flush()
            except (OSError, ValueError):  # a closed pipe: progress is not worth failing the run for
                pass
            self.last = self.state.clock()

    # -- loading: by workers (ticks come) or by this process (``here``: busy, a thread keeps the log alive) --
    def loading(self, path: str, index: int, files: int, here: bool = False) -> None:
        self.state.files = files
        if index == 0:
            self.write(f"loading {_plural(files, 'spec file')}")
            if here:
                self._start_heartbeat()
        with self.lock:
            self.loading_path, self.loading_since = (path, self.state.clock()) if here else (None, 0.0)
            if not here:
                self.loads[path] = self.state.clock()

    def loaded(self, path: str, points: int) -> None:
        with self.lock:
            self.loads.pop(path, None)
        if self.state.checking_since is not None:  # loaded in a later round: the work grows
            self.state.planned[path] = points
            self.state.points += points

    def busy(self, what: Optional[str]) -> None:
        """This process is busy (``what``) and cannot tick: a thread keeps the log alive until ``busy(None)``
        (called before this process forks again)."""
        if what is None:
            self.close()
            self.busy_with = None
            return
        self.busy_with = what
        self._start_heartbeat()

    def _start_heartbeat(self) -> None:
        if self.heartbeat <= 0 or self._thread is not None:
            return
        self._stop = threading.Event()

        def beat() -> None:
            assert self._stop is not None
            while not self._stop.wait(min(1.0, self.heartbeat / 2)):
                self._beat()
        self._thread = threading.Thread(target=beat, name="dpverify-progress", daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        """The heartbeat line, when :data:`HEARTBEAT` seconds passed without a line: what is still being
        checked, loaded, or done here."""
        now = self.state.clock()
        with self.lock:
            if now - self.last < self.heartbeat:
                return
            loads = dict(self.loads)
            if self.loading_path is not None:
                loads[self.loading_path] = self.loading_since
            running = {path: list(entry) for path, entry in self.state.running.items()}
            busy = self.busy_with
        if running:
            text = "still checking " + ", ".join(
                f"{path} ({done}/{self.state.planned.get(path, '?')} points, {now - since:.0f} s)"
                for path, (done, since) in running.items())
        elif loads:
            text = "still loading " + ", ".join(f"{path} ({now - since:.0f} s)" for path, since in loads.items())
        elif busy:
            text = f"still {busy}"
        else:
            return
        self.write(f"{self._where()} {text}")

    def close(self) -> None:
        """Stop the loading heartbeat (before forking, and when the run ends or fails)."""
        if self._stop is not None and self._thread is not None:
            self._stop.set()
            self._thread.join()
        self._stop = self._thread = None

    # -- checking --
    def planned(self, plan: list[tuple[str, int]]) -> None:
        self.close()
        self.state.plan(plan)
        loaded = seconds_text(self.state.clock() - self.state.began)
        jobs = min(self.jobs, sum(1 for _, n in plan if n))
        workers = f" with {jobs} worker processes" if jobs > 1 else ""
        self.write(f"loaded {_plural(self.state.files, 'spec file')} in {loaded}: "
                   f"{_plural(self.state.points, 'claim point')} to check{workers}")

    def started(self, path: str) -> None:
        self.state.running[path] = [0, self.state.clock()]

    def point(self, path: str, label: str) -> None:
        self.state.points_done += 1
        if path in self.state.running:
            self.state.running[path][0] += 1

    def _where(self) -> str:
        s = self.state
        elapsed = clock_text(s.clock() - s.began)
        width = len(str(s.files))
        if s.checking_since is None:
            return f"[{s.files_done:>{width}}/{s.files} files, {elapsed}]"
        eta = s.eta()
        left = f", ~{clock_text(eta)} left" if eta is not None and s.points_done < s.points else ""
        return f"[{s.files_done:>{width}}/{s.files} files, {s.points_done}/{s.points} points, {elapsed}{left}]"

    def finished(self, path: str, reports: list[SpecReport], seconds: float) -> None:
        self.state.running.pop(path, None)
        self.state.files_done += 1
        self.write(f"{self._where()} {path}: {file_words(reports)} ({seconds_text(seconds)})")

    def tick(self) -> None:
        self._beat()


class Bar:
    """Progress as a rich bar on a terminal's stderr (``console``): files while loading, then claim points
    with the files done, the time elapsed and the time left."""

    def __init__(self, console: Any) -> None:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
        self.state = _State(time.monotonic)
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                 TextColumn("{task.completed}/{task.total} {task.fields[unit]}"),
                                 TextColumn("{task.fields[files]}"), TimeElapsedColumn(),
                                 TextColumn("ETA"), TimeRemainingColumn(), console=console, transient=True)
        self.task: Optional[Any] = None

    def __enter__(self) -> Bar:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.__exit__(*exc)

    @staticmethod
    def _short(text: str, width: int = 48) -> str:
        return text if len(text) <= width else "..." + text[-(width - 3):]

    def loading(self, path: str, index: int, files: int, here: bool = False) -> None:
        if self.task is None:
            self.task = self.progress.add_task("loading", total=files, unit="spec files loaded", files="")
        if here:
            self.progress.update(self.task, completed=index)
        self.progress.update(self.task, description=f"loading {self._short(path)}")

    def loaded(self, path: str, points: int) -> None:
        if self.task is None:
            return
        if self.state.checking_since is None:
            self.progress.update(self.task, advance=1)
        else:  # loaded in a later round: the work grows
            self.state.points += points
            self.progress.update(self.task, total=self.state.points)

    def planned(self, plan: list[tuple[str, int]]) -> None:
        self.state.plan(plan)
        if self.task is not None:
            self.progress.remove_task(self.task)
        self.task = self.progress.add_task("checking", total=self.state.points, unit="points",
                                           files=f"0/{self.state.files} files")

    def started(self, path: str) -> None:
        pass

    def point(self, path: str, label: str) -> None:
        if self.task is not None:
            self.progress.update(self.task, advance=1, description=self._short(f"{path}::{label}"))

    def finished(self, path: str, reports: list[SpecReport], seconds: float) -> None:
        self.state.files_done += 1
        if self.task is not None:
            self.progress.update(self.task, files=f"{self.state.files_done}/{self.state.files} files")

    def tick(self) -> None:
        pass

    def busy(self, what: Optional[str]) -> None:
        pass

    def close(self) -> None:
        pass
