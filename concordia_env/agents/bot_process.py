"""A bot's process: started, fed one line at a time, read with a deadline, and always cleaned up.

:class:`BotProcess` runs a program with pipes on its stdin, stdout and stderr. Three daemon threads
do the blocking: one writes the lines we send (so a bot that stops reading cannot block us), one
reads its stdout into a queue line by line (so a read can wait with a deadline), one keeps the tail
of its stderr (for error messages). Every failure (the process exits, closes its output, writes a
line too long, or sends nothing before the deadline) is a :class:`BotFailure` with a short reason;
the caller, which knows the bot, the seat and the decision, turns it into a message.

The process runs in a session of its own, so a Ctrl-C at the terminal (which a tournament answers
by finishing its games in flight) does not reach it; :meth:`BotProcess.stop` therefore ends the
whole process group: stdin is closed (the bot's signal to exit), a short grace later the group is
killed, and the process is waited for, so no zombie is left. A finalizer does the same for a
process still running when its object is collected or the interpreter exits.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Sequence
from typing import IO

#: the longest line a bot may write (a longer one is an error, not a memory hog)
MAX_LINE_BYTES = 1 << 20
#: the stderr bytes kept for error messages
STDERR_TAIL_BYTES = 4096
#: how long a bot may take to exit after its stdin closes before it is killed
EXIT_GRACE_S = 0.5

_EOF = object()
_TOO_LONG = object()


class BotFailure(Exception):
    """The bot's process failed to answer: the message says how (exited, silent, line too long)."""


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill ``proc`` and every process of its session (a shell wrapper's children too), then reap it."""
    if proc.poll() is None:
        try:
            if hasattr(os, "killpg"):
                os.killpg(proc.pid, signal.SIGKILL)
            else:  # pragma: no cover - Windows has no process groups to kill
                proc.kill()
        except (ProcessLookupError, PermissionError):
            proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)


def _read_lines(stream: IO[bytes], lines: queue.Queue[object]) -> None:
    """Put every line of ``stream`` on ``lines``, then ``_EOF`` (or ``_TOO_LONG`` for an over-long line)."""
    try:
        while True:
            line = stream.readline(MAX_LINE_BYTES + 1)
            if not line:
                break
            if len(line) > MAX_LINE_BYTES:
                lines.put(_TOO_LONG)
                return
            lines.put(line)
    except (OSError, ValueError):  # the pipe closed under us as the process was killed
        pass
    lines.put(_EOF)


def _keep_tail(stream: IO[bytes], tail: bytearray, lock: threading.Lock) -> None:
    """Keep the last :data:`STDERR_TAIL_BYTES` of ``stream`` in ``tail``."""
    try:
        while chunk := stream.read1(4096):  # type: ignore[attr-defined]
            with lock:
                tail.extend(chunk)
                del tail[:-STDERR_TAIL_BYTES]
    except (OSError, ValueError):
        pass


def _write_lines(stream: IO[bytes], out: queue.Queue[bytes | None]) -> None:
    """Write what comes on ``out`` to ``stream`` until None or a broken pipe (the bot exited)."""
    try:
        while (data := out.get()) is not None:
            stream.write(data)
            stream.flush()
    except (OSError, ValueError):
        pass
    with contextlib.suppress(OSError, ValueError):
        stream.close()


class BotProcess:
    """A running bot program (see the module doc). ``OSError`` if it cannot be started."""

    def __init__(self, argv: Sequence[str], cwd: str | None = None) -> None:
        self.argv = list(argv)
        self.proc = subprocess.Popen(self.argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True)
        self._lines: queue.Queue[object] = queue.Queue()
        self._out: queue.Queue[bytes | None] = queue.Queue()
        self._tail = bytearray()
        self._lock = threading.Lock()
        assert self.proc.stdin is not None and self.proc.stdout is not None and self.proc.stderr is not None
        self._threads = [
            threading.Thread(target=_write_lines, args=(self.proc.stdin, self._out), daemon=True),
            threading.Thread(target=_read_lines, args=(self.proc.stdout, self._lines), daemon=True),
            threading.Thread(target=_keep_tail, args=(self.proc.stderr, self._tail, self._lock), daemon=True),
        ]
        for thread in self._threads:
            thread.start()
        self._finalizer = weakref.finalize(self, _kill_group, self.proc)

    def send(self, line: str) -> None:
        """Queue one line (``line`` without its newline) for the bot's stdin; never blocks."""
        self._out.put(line.encode() + b"\n")

    def pending(self) -> bool:
        """Whether the bot wrote a line nobody has read yet."""
        return not self._lines.empty()

    def receive(self, timeout_s: float) -> str:
        """The bot's next line (without its newline), waiting at most ``timeout_s`` seconds;
        :class:`BotFailure` if none comes in time, the bot exits or writes a line too long."""
        try:
            item = self._lines.get(timeout=max(timeout_s, 0.0))
        except queue.Empty:
            raise BotFailure(f"sent no answer within {round(timeout_s * 1000)} ms") from None
        if item is _TOO_LONG:
            raise BotFailure(f"wrote a line longer than {MAX_LINE_BYTES} bytes")
        if item is _EOF:
            self._lines.put(_EOF)  # every later read fails alike
            raise BotFailure(self._exit_reason())
        assert isinstance(item, bytes)
        return item.decode("utf-8", errors="replace").rstrip("\r\n")

    def _exit_reason(self) -> str:
        """Why the output ended: the exit status when the process is gone (after a short wait)."""
        try:
            status = self.proc.wait(timeout=EXIT_GRACE_S)
        except subprocess.TimeoutExpired:
            return "closed its stdout"
        if status < 0:
            with contextlib.suppress(ValueError):
                return f"was killed by signal {signal.Signals(-status).name}"
        return f"exited with status {status}"

    def stderr_tail(self, limit: int = 300) -> str:
        """The end of what the bot wrote to stderr, on one line (lines joined with `` | ``)."""
        with self._lock:
            text = bytes(self._tail).decode("utf-8", errors="replace")
        text = " | ".join(line.strip() for line in text.splitlines() if line.strip())
        return text if len(text) <= limit else "..." + text[-(limit - 3):]

    def stop(self, grace_s: float = EXIT_GRACE_S) -> None:
        """End the bot: close its stdin, give it ``grace_s`` seconds to exit, then kill its process
        group; reap it and let the threads finish. Safe to call twice."""
        self._out.put(None)
        deadline = time.monotonic() + grace_s
        while self.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        self._finalizer()  # kills the group if still running, and waits for the process
        for thread in self._threads:
            thread.join(timeout=1)
