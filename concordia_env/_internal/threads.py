"""numpy's BLAS threads: one per process where games run in parallel processes.

The networks of the learned agents multiply small matrices; with several game processes,
OpenBLAS's own threads on them made an ``az`` search 4 times slower on 2 cores (1.0 instead of
0.24 ms per simulation; a self-play generation took 707 s instead of 58 s). Every pool of game
workers therefore sets one BLAS thread per process
(:func:`concordia_env.arena.pools.game_worker_init`), and games played in the caller's
process do the same for their duration (:func:`one_blas_thread`): two such processes side by side
(two strength workers at ``--workers 1``) made ``net`` take 25-36 ms a decision instead of 0.5 ms,
its BLAS threads waiting for a core the other process held.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


def blas_threads(n: int | None) -> int | None:
    """Set numpy's BLAS threads to ``n`` (None: leave them) and return the previous count (None if
    no BLAS library is found). Games run one per process; with several processes, OpenBLAS's own
    threads on the network's small matrix products made the search 4 times slower on 2 cores (1.0
    instead of 0.24 ms per simulation), so self-play and evaluation run with one BLAS thread per
    process. threadpoolctl finds the library (OpenBLAS, MKL or BLIS, on any system)."""
    from threadpoolctl import threadpool_info, threadpool_limits

    before = next((int(i["num_threads"]) for i in threadpool_info() if i.get("user_api") == "blas"), None)
    if n is not None:
        threadpool_limits(n, user_api="blas")
    return before


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """One BLAS thread while the block runs (games played in this process), the previous count
    after it. The products are split by rows and columns, never along the summed dimension, so
    the numbers, and the moves, are the same as with more threads; only the waiting goes."""
    before = blas_threads(1)
    try:
        yield
    finally:
        blas_threads(before)
