"""Live processes seen from /proc, for the tests that send signals to commands and their workers."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest


def children(pid: int) -> list[int]:
    """The live child processes of ``pid`` (from /proc)."""
    kids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
            except OSError:
                continue
            fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
            if fields.get("PPid", "").strip() == str(pid) and not fields.get("State", "").startswith("Z"):
                kids.append(int(entry.name))
    return kids


def running(pid: int) -> bool:
    """``pid`` exists and is not a zombie (a killed orphan may stay one under a non-reaping init)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def kill_left_running(started: list) -> None:
    """Kill the processes of ``started`` (``subprocess.Popen``) a failed test left running (their
    workers die with them), and empty the list."""
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    started.clear()


def wait_for(condition: Callable[[], object], timeout: float, what: str = "condition", poll: float = 0.02) -> None:
    """Wait until ``condition()`` holds; past ``timeout`` seconds (a bound for a hung process, far
    above what the awaited event takes) the test fails naming ``what``."""
    t0 = time.monotonic()
    while not condition():
        if time.monotonic() - t0 > timeout:
            pytest.fail(f"no {what} within {timeout} s")
        time.sleep(poll)


def interrupt_on_call(monkeypatch: pytest.MonkeyPatch, owner: object, name: str, n: int = 5) -> Callable[..., object]:
    """Make ``owner.name`` (a worker's one-game function) raise KeyboardInterrupt on its ``n``-th call, as
    Ctrl-C would there, and call through otherwise; the original function, to put back for a resume."""
    calls = 0
    original = getattr(owner, name)

    def interrupted(task: object) -> object:
        nonlocal calls
        calls += 1
        if calls == n:
            raise KeyboardInterrupt
        return original(task)

    monkeypatch.setattr(owner, name, interrupted)
    return original
