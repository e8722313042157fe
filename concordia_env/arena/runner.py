"""The one place that plays many games: a pool of workers, the stop signals, BLAS threads and a
progress bar around :class:`~concordia_env.arena.pools.PoolWork`.

Tournaments, evaluations, strength runs, value data and expert iteration's self-play all run their
tasks as::

    with Runner(play_one, tasks, workers=2, desc="italia 2p") as games:
        for i, result in games:          # in task order, whatever the number of workers
            ...                           # keep it, write it
    if games.cut_short:                   # Ctrl-C or SIGTERM stopped it (the games in flight finished)
        ...

so they stop alike (:mod:`~concordia_env.arena.pools`): the first Ctrl-C or SIGTERM starts no new
task and lets the tasks in flight finish, a second kills the workers and raises
:class:`~concordia_env.arena.pools.Interrupted` with ``aborted`` set. The pool is made before the
signal handlers are installed (``ray.init`` installs its own SIGTERM handler) and the first tasks
are submitted before the progress bar starts its monitor thread (forking a process that has
threads can deadlock).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor
from types import TracebackType
from typing import Any

from tqdm import tqdm

from .._internal.threads import one_blas_thread
from .pools import Interrupts, PoolWork, pool_closed, process_pool, stop_signals


class Runner:
    """Runs ``fn(task)`` for every task of ``tasks`` and yields ``(index, result)`` in task order.

    Args:
        fn: a picklable top-level function playing one task in a worker.
        tasks: the tasks, each picklable.
        workers: worker processes (1: this process, no pool); at most one per task is started.
        pool: a ready pool to use instead (a Ray pool, or one shared by several runs); ``workers``
            is then the number of tasks kept in flight. It is closed after the run, killed if the
            run failed.
        unit: what a task is, in the progress bar and the interruption messages ("game", "shard").
        progress: show a tqdm bar on stderr.
        desc, total, initial, leave: the bar's text, length (default: the number of tasks, or the
            sum of ``sizes``), starting count (done before, when resuming) and whether it stays after
            the run.
        sizes: what each task counts for on the bar (default 1 each), counted in ``bar_unit``
            (default ``unit``): a shard of several games, say.
        graceful: whether a first Ctrl-C lets the tasks in flight finish (else it kills them).
        one_blas: one BLAS thread in this process during the run, as in the workers, so that runs
            side by side do not oversubscribe the cores.
    """

    def __init__(self, fn: Callable[[Any], Any], tasks: Sequence[Any], *, workers: int = 1,
                 pool: Executor | None = None, unit: str = "game", progress: bool = False,
                 desc: str | None = None, total: int | None = None, initial: int = 0, leave: bool = False,
                 sizes: Sequence[int] | None = None, bar_unit: str | None = None, graceful: bool = True,
                 one_blas: bool = True) -> None:
        self.fn, self.tasks, self.unit, self.graceful, self.one_blas = fn, list(tasks), unit, graceful, one_blas
        self.window = max(1, min(workers, len(self.tasks)))
        self.pool = pool
        self.sizes = [1] * len(self.tasks) if sizes is None else list(sizes)
        self.bar_options = {"total": sum(self.sizes) + initial if total is None else total, "initial": initial,
                            "disable": not progress, "unit": bar_unit or unit, "desc": desc, "leave": leave,
                            "file": sys.stderr}
        self.bar: Any = None
        self.interrupts: Interrupts | None = None
        self._work: PoolWork | None = None
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> Runner:
        stack = self._stack.__enter__()
        try:
            if self.one_blas:
                stack.enter_context(one_blas_thread())
            pool = self.pool if self.pool is not None or not self.tasks else process_pool(self.window)
            stack.enter_context(pool_closed(pool))
            self.interrupts = stack.enter_context(stop_signals(self.unit, self.graceful))
            self._work = PoolWork(self.fn, self.tasks, pool, self.window, self.interrupts)
            self.bar = stack.enter_context(tqdm(**self.bar_options))
        except BaseException:
            self._stack.__exit__(*sys.exc_info())
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 trace: TracebackType | None) -> bool | None:
        return self._stack.__exit__(kind, exc, trace)

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        if self._work is None:
            raise RuntimeError("iterate a Runner inside its with block")
        for i, result in self._work:
            yield i, result
            self.bar.update(self.sizes[i])

    @property
    def cut_short(self) -> bool:
        """Whether a stop signal left tasks undone."""
        return self._work is not None and self._work.cut_short

