"""Pools of game workers, and the one way every command stops them (Ctrl-C, SIGTERM).

Tournaments, evaluations, strength runs, value data and expert iteration's self-play all play
their games through :class:`PoolWork` inside :func:`stop_signals`, so they stop alike:

* the first Ctrl-C (SIGINT) or SIGTERM starts no new work; the work in flight finishes and is
  kept, one line says so, and the command then saves, prints one line with the command that
  resumes and exits 130;
* a second one kills the workers (:func:`close_pool`) and raises :class:`Interrupted` with
  ``aborted`` set at once: nothing waits for a game in flight, so the command exits 130 at once.

Worker processes ignore Ctrl-C (it is the parent's to handle: a terminal sends it to the whole
process group), end with their parent even when it is killed (:func:`die_with_parent`) and use
one BLAS thread (:mod:`concordia_env._internal.threads`). They keep SIGTERM's default, which the pool
itself uses to end the workers of a broken pool; SIGTERM is meant for the parent process.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from typing import Any

from .._internal.threads import blas_threads

#: Linux prctl option: the signal a process gets when its parent dies
PR_SET_PDEATHSIG = 1
#: seconds between two checks of the parent, where the kernel cannot do it (not Linux)
PARENT_POLL_SECONDS = 1.0
#: the signals that stop a pool: the first lets the work in flight finish, the second aborts it
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


# ---------------------------------------------------------------- workers
def ignore_sigint() -> None:
    """Worker initializer: Ctrl-C is the parent's to handle (it stops the pool), rather than
    every worker dying with its own traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def die_with_parent() -> None:
    """Make this worker process end when its parent does, even when the parent is killed
    (``kill -9``, out of memory) and cannot stop its workers itself.

    On Linux the kernel sends ``SIGKILL`` when the parent dies (``prctl(PR_SET_PDEATHSIG)``);
    a parent that died before that took effect is caught by checking it now. Elsewhere a
    daemon thread checks every :data:`PARENT_POLL_SECONDS` whether the process was adopted
    (``os.getppid()`` changed) and exits if so."""
    parent = multiprocessing.parent_process()
    start_ppid = os.getppid()
    armed = False
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
    # forked or spawned workers are the parent's own children: adopted means orphaned (a fork
    # server's children have the fork server as parent, which ends with the parent in turn)
    direct = multiprocessing.get_start_method(allow_none=True) in ("fork", "spawn")
    if parent is not None and direct and os.getppid() != parent.pid:
        os._exit(1)
    if not armed:
        def watch() -> None:
            while os.getppid() == start_ppid:
                time.sleep(PARENT_POLL_SECONDS)
            os._exit(1)

        threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def game_worker_init() -> None:
    """Initializer of every pool of game workers: Ctrl-C is the parent's (:func:`ignore_sigint`),
    the worker dies with its parent (:func:`die_with_parent`), and one BLAS thread per process
    (:mod:`concordia_env._internal.threads`)."""
    ignore_sigint()
    die_with_parent()
    blas_threads(1)


def process_pool(workers: int) -> Executor | None:
    """A pool of ``workers`` game workers (:func:`game_worker_init`); None for one worker (the
    games are then played in this process)."""
    return ProcessPoolExecutor(workers, initializer=game_worker_init) if workers > 1 else None


# ---------------------------------------------------------------- signals
class Interrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM stopped a pool. ``aborted``: a second signal killed the work in flight;
    otherwise the work in flight finished and was kept."""

    def __init__(self, aborted: bool = False) -> None:
        super().__init__("aborted" if aborted else "interrupted")
        self.aborted = aborted


def _tell(text: str) -> None:
    """Write to stderr from a signal handler: straight to the file descriptor, so a handler running
    while the main thread writes to ``sys.stderr`` (a progress bar) cannot re-enter its buffer."""
    try:
        os.write(2, text.encode())
    except OSError:
        pass


def _signal_name(signum: int) -> str:
    return "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name


class Interrupts:
    """What the stop signals said so far: ``stop`` after the first; the second raises
    :class:`Interrupted` (aborted). ``in_flight`` (kept up to date by :class:`PoolWork`) and
    ``unit`` (``"game"``, ``"shard"``) word the line the first signal prints."""

    def __init__(self, unit: str = "game") -> None:
        self.unit = unit
        self.stop = False
        self.in_flight = 0

    def handle(self, signum: int, frame: Any) -> None:
        """The signal handler (main thread only, as Python runs them)."""
        name = _signal_name(signum)
        if self.stop:
            _tell(f"\n{name} again: stopping the {self.unit}s in flight\n")
            raise Interrupted(aborted=True)
        self.stop = True
        n = self.in_flight
        _tell(f"\n{name}: no new {self.unit}s; finishing the {n} {self.unit}{'' if n == 1 else 's'} in flight "
              f"and saving (Ctrl-C again to abort {'it' if n == 1 else 'them'})\n")

    def check(self) -> None:
        """``Interrupted`` (not aborted) if a stop signal came: for after the kept work is saved, in a
        command with more to do after the pool (a single pool's command checks
        :attr:`PoolWork.cut_short` instead: work that all finished is not lost to a late signal)."""
        if self.stop:
            raise Interrupted()


_ACTIVE: Interrupts | None = None


def _takes_over(signum: int) -> bool:
    """Whether :func:`stop_signals` handles ``signum``: SIGINT only over Python's default handler
    (a caller with its own handler keeps it; an ignored Ctrl-C, in a background job, stays
    ignored), SIGTERM unless ignored (Ray, for one, installs its own that merely exits)."""
    current = signal.getsignal(signum)
    if signum == signal.SIGINT:
        return current is signal.default_int_handler
    return current is not signal.SIG_IGN


@contextmanager
def stop_signals(unit: str = "game", enabled: bool = True) -> Iterator[Interrupts]:
    """Ctrl-C and SIGTERM stop the pools run inside the block (see the module doc); the previous
    handlers come back after it. Installed from the main thread only (elsewhere, and when not
    ``enabled``, the signals keep their handlers and nothing sets ``stop``). Nested blocks share
    the outer block's :class:`Interrupts`, so one Ctrl-C stops the whole command."""
    global _ACTIVE
    if _ACTIVE is not None:
        yield _ACTIVE
        return
    interrupts = Interrupts(unit)
    previous: dict[int, Any] = {}
    if enabled and threading.current_thread() is threading.main_thread():
        for signum in STOP_SIGNALS:
            if _takes_over(signum):
                previous[signum] = signal.signal(signum, interrupts.handle)
    _ACTIVE = interrupts if previous else None
    try:
        yield interrupts
    finally:
        _ACTIVE = None
        for number, handler in previous.items():
            signal.signal(number, handler)


def _raise_keyboard_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(_signal_name(signum))


@contextmanager
def sigterm_as_ctrl_c() -> Iterator[None]:
    """In the block SIGTERM raises ``KeyboardInterrupt`` as Ctrl-C does, so a command that saves on
    Ctrl-C outside a pool (a training loop: a checkpoint, one line, exit 130) saves on SIGTERM too,
    as a job scheduler's stop asks. Pools run inside still stop through :func:`stop_signals`,
    which takes SIGTERM over for their duration. Main thread only; an ignored SIGTERM stays
    ignored; the previous handler comes back after the block."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is signal.SIG_IGN:
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


# ---------------------------------------------------------------- running the work
def terminate_pool(pool: Executor) -> None:
    """End a pool's work in flight at once (its results are lost) and release the pool: a process
    pool's workers are killed, a Ray pool's tasks cancelled (:meth:`RayGamePool.terminate`).
    Waiting for the work in flight instead would keep an aborted run alive for a game's length,
    and the interpreter's exit joins the pool's threads, which wait for the workers."""
    terminate = getattr(pool, "terminate", None)
    if callable(terminate):
        terminate()
        return
    processes = dict(getattr(pool, "_processes", None) or {})  # private, but the only handle on them
    for process in processes.values():
        try:
            process.kill()
        except (OSError, ValueError, AttributeError):
            pass
    pool.shutdown(wait=True, cancel_futures=True)


def close_pool(pool: Executor | None, failed: bool) -> None:
    """Release a pool: wait for its (idle) workers to exit, or, when the run ``failed`` (an error,
    an abort), kill them (:func:`terminate_pool`). A signal during the wait kills them too."""
    if pool is None:
        return
    if failed:
        terminate_pool(pool)
        return
    try:
        pool.shutdown(wait=True)
    except BaseException:
        terminate_pool(pool)
        raise


@contextmanager
def pool_closed(pool: Executor | None) -> Iterator[Executor | None]:
    """``pool`` for the block, closed after it by :func:`close_pool` (killed if the block raised)."""
    try:
        yield pool
    except BaseException:
        close_pool(pool, failed=True)
        raise
    close_pool(pool, failed=False)


class PoolWork:
    """Runs ``fn(task)`` for every task and yields ``(index, result)`` in task order.

    With a pool at most ``window`` tasks are in flight (so a stop leaves few to finish); tasks are
    submitted as others finish, and none once ``interrupts.stop`` is set: iteration then ends
    after the tasks in flight. Without a pool the tasks run here, one by one, and a stop ends
    iteration after the current one. The first tasks are submitted at construction, which forks
    the pool's workers before any thread (a progress bar's) starts."""

    def __init__(self, fn: Callable[[Any], Any], tasks: Sequence[Any], pool: Executor | None, window: int,
                 interrupts: Interrupts) -> None:
        self.fn, self.tasks, self.pool, self.window, self.interrupts = fn, tasks, pool, max(1, window), interrupts
        self.submitted = self.yielded = 0
        self.pending: dict[Future, int] = {}
        self.ready: dict[int, Any] = {}
        self._fill()

    def _fill(self) -> None:
        while (self.pool is not None and not self.interrupts.stop and self.submitted < len(self.tasks)
               and len(self.pending) < self.window):
            self.pending[self.pool.submit(self.fn, self.tasks[self.submitted])] = self.submitted
            self.submitted += 1
        self.interrupts.in_flight = (self.submitted - self.yielded) if self.pool is not None else 1

    @property
    def cut_short(self) -> bool:
        """Whether a stop signal left tasks undone (a stop after the last task was submitted does not)."""
        return self.interrupts.stop and self.yielded < len(self.tasks)

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        if self.pool is None:
            for i, task in enumerate(self.tasks):
                if self.interrupts.stop:
                    return
                result = self.fn(task)
                self.yielded += 1
                yield i, result
            return
        while True:
            self._fill()
            if self.yielded == self.submitted:
                return  # all done, or stopped with nothing left in flight
            if self.yielded in self.ready:
                self.yielded += 1
                yield self.yielded - 1, self.ready.pop(self.yielded - 1)
                continue
            # a timeout, so that the main thread runs a signal handler soon after the signal
            done, _ = wait(self.pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for future in done:
                self.ready[self.pending.pop(future)] = future.result()
