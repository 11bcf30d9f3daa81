"""SIGINT and SIGTERM stop `dpverify check` and its worker processes within seconds.

The baseline left two orphaned workers on SIGTERM and ran on for 43 s after SIGINT.  A spec
whose mechanism sleeps keeps two workers busy (sleeping, so the test costs no CPU); the run
is signalled once both workers exist, and must exit promptly, with 128 + the signal number
and a message, leaving no process behind.  Linux only: children are read from /proc.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

SLOW = textwrap.dedent("""
    import time
    import dpverify as dp
    eps = dp.symbol("eps", positive=True)

    def NAME(data, eps):
        time.sleep(120)
        return dp.randomized_response(data[0], eps)

    s = dp.spec(NAME, universe=dp.universe([0, 1], n=1, neighbours=dp.REPLACE_ONE),
                grid={eps: [1]}, claims=[dp.private(eps)])
""")


def _children(pid: int) -> list[int]:
    """Live (not zombie) processes whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == pid and state != "Z":
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _started(tmp_path: Path) -> tuple[subprocess.Popen, list[int]]:
    """`dpverify check` on two slow spec files with two workers, once both workers run."""
    for name in ("slow_a", "slow_b"):
        (tmp_path / f"{name}.py").write_text(SLOW.replace("NAME", name))
    root = str(Path(__file__).resolve().parent.parent)  # this checkout's dpverify
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    with open(tmp_path / "out", "w") as out, open(tmp_path / "err", "w") as err:  # files: an orphan holding
        run = subprocess.Popen([sys.executable, "-m", "dpverify.cli", "check", "--no-proofs", "--jobs", "2", "."],
                               cwd=tmp_path, env=env, stdout=out, stderr=err,  # a pipe would block the test
                               start_new_session=True)  # a signal to the test's process group does not reach it
    deadline = time.monotonic() + 60
    while len(workers := _children(run.pid)) < 2:
        if run.poll() is not None or time.monotonic() > deadline:
            run.kill()
            run.wait()
            pytest.fail(f"the workers did not start: {(tmp_path / 'err').read_text()}")
        time.sleep(0.05)
    time.sleep(0.3)  # the workers are now inside the mechanism
    return run, workers


def _gone(pids: list[int], within: float) -> bool:
    deadline = time.monotonic() + within
    while any(_alive(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.parametrize("signum,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_stops_the_run_and_its_workers_at_once(signum: int, code: int, tmp_path) -> None:
    run, workers = _started(tmp_path)
    sent = time.monotonic()
    os.kill(run.pid, signum)
    try:
        run.wait(timeout=5)
    except subprocess.TimeoutExpired:
        run.kill()
        run.wait()
    took = time.monotonic() - sent
    leftover = [p for p in workers if _alive(p)]
    for pid in leftover:
        os.kill(pid, signal.SIGKILL)
    out, err = (tmp_path / "out").read_text(), (tmp_path / "err").read_text()
    assert took < 3, f"{signal.Signals(signum).name}: still running {took:.1f} s later"
    assert not leftover, f"{signal.Signals(signum).name} left workers {leftover} running"
    assert run.returncode == code, (run.returncode, err)
    assert f"interrupted ({signal.Signals(signum).name})" in err and "Traceback" not in err, err
    assert out == ""  # nothing reported


def test_workers_die_with_a_parent_that_is_killed(tmp_path) -> None:
    """SIGKILL leaves the parent no clean-up: the workers end by themselves (PR_SET_PDEATHSIG)."""
    run, workers = _started(tmp_path)
    run.kill()
    run.wait()
    survived = not _gone(workers, within=3)
    for pid in workers:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
    assert not survived, f"workers {workers} outlived their killed parent"
