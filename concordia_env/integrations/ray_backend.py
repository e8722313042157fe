"""Ray: play tournament games on a Ray cluster (``concordia tournament --backend ray``).

:class:`RayGamePool` is a ``concurrent.futures.Executor`` whose ``submit(fn, *args)`` runs
``fn(*args)`` as a Ray remote task (one CPU each) and returns a standard ``Future``, so the
tournament runner drives it exactly as it drives its process pool: the same per-game function
(``concordia_env.arena.tournament._play``), the same window of games in flight, the same
in-order processing, partial saves, resume and Ctrl-C handling. A game's result depends only
on its task (map, players, seed, seat specs), so the result is identical to the local backend's
for the same seeds, whatever the cluster.

Connecting (:func:`connect`): no address starts a local Ray instance on this machine (or uses
the one ``ray.init`` already made in this process); ``auto`` joins the cluster this machine
belongs to (``ray start`` ran here); ``HOST:PORT`` joins the cluster whose head listens there
(the GCS port, 6379 by default: ``ray start --head --port 6379`` on the head, then
``ray start --address HOST:6379`` on each worker machine); ``ray://HOST:10001`` goes through
the Ray client. Every machine needs ``concordia-env`` installed in the same Python version.
A cluster that cannot be reached is one :class:`RayConnectionError` line, checked with a
plain TCP connection first (Ray itself retries for two minutes, then exits the process).

Stopping: the pool stops like every pool of games (:mod:`concordia_env.arena.pools`): a first
Ctrl-C or SIGTERM lets the tasks in flight finish; a second calls :meth:`RayGamePool.terminate`,
which cancels them (``ray.cancel(force=True)``) and shuts down the Ray instance this process
started, so none of its helper processes outlive the command.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

from concordia_env._internal.extras import install_hint

#: what to install when Ray is missing
INSTALL_HINT = install_hint("ray", "pip install ray")
#: seconds to wait for a TCP connection to the cluster's address before giving up
CONNECT_TIMEOUT = 5.0

__all__ = ["CONNECT_TIMEOUT", "INSTALL_HINT", "RayConnectionError", "RayGamePool", "cluster_cpus", "connect",
           "require_ray"]

#: whether :func:`connect` started (or joined) Ray in this process: then it is this process's to shut down
_STARTED_HERE = False


class RayConnectionError(ValueError):
    """No Ray cluster at the address given (or a malformed address): the message is one line."""


def require_ray() -> Any:
    """The ``ray`` module; ``ImportError`` with a one-line message naming the extra to install."""
    try:
        import ray
    except ImportError as exc:
        raise ImportError(f"the Ray backend needs Ray, which is not installed ({exc}): {INSTALL_HINT}") from None
    return ray


def _host_port(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of a ``HOST:PORT`` or ``ray://HOST:PORT`` address; None for ``auto``/``local``.
    ``RayConnectionError`` for a malformed one."""
    if address in ("auto", "local"):
        return None
    rest = address[len("ray://"):] if address.startswith("ray://") else address
    host, sep, port = rest.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise RayConnectionError(f"bad Ray address {address!r}: give HOST:PORT (the head's GCS port, e.g. "
                                 f"10.0.0.5:6379), ray://HOST:10001 for the Ray client, or auto")
    return host, int(port)


def check_address(address: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """``RayConnectionError`` (one line) unless something accepts TCP connections at ``address``."""
    hp = _host_port(address)
    if hp is None:
        return
    try:
        with socket.create_connection(hp, timeout=timeout):
            pass
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise RayConnectionError(f"cannot reach a Ray cluster at {address} ({why}); start one with 'ray start "
                                 f"--head --port {hp[1]}' there, or fix --address") from None


def connect(address: str | None = None, num_cpus: int | None = None) -> bool:
    """Connect this process to Ray (see the module doc); True if this call initialised it (the
    caller may then ``ray.shutdown()``), False if Ray was already initialised here.

    ``num_cpus`` applies to a local instance only. An ``address`` is checked (a TCP connection)
    even when Ray is already initialised here. ``ImportError`` if Ray is missing;
    :class:`RayConnectionError` for an address with no cluster."""
    ray = require_ray()
    if address is not None:
        check_address(address)
    if ray.is_initialized():
        return False
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
    if address is None:
        if num_cpus is not None:
            kwargs["num_cpus"] = num_cpus
    else:
        kwargs["address"] = address
    try:
        ray.init(**kwargs)
    except (ConnectionError, ValueError, RuntimeError, SystemExit) as exc:
        line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        where = f"at {address}" if address else "locally"
        raise RayConnectionError(f"cannot connect to Ray {where}: {line}") from None
    global _STARTED_HERE
    _STARTED_HERE = True
    return True


def cluster_cpus() -> int:
    """CPUs in the connected Ray cluster (at least 1)."""
    ray = require_ray()
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


class RayGamePool(Executor):
    """An executor that runs each submitted call as a Ray task of one CPU.

    Args:
        address: the cluster (see :func:`connect`); None: a local instance, or the Ray this
            process is already connected to.
        num_cpus: CPUs of a local instance this pool starts (None: all of the machine's).

    ``shutdown(cancel_futures=True)`` cancels (kills) the tasks not finished yet; a Ray this pool
    initialised is shut down with it. :meth:`terminate` is the abort: see the module doc."""

    def __init__(self, address: str | None = None, num_cpus: int | None = None) -> None:
        self._ray = require_ray()
        self._owns_ray = connect(address, num_cpus)
        self._remotes: dict[Callable[..., Any], Any] = {}
        self._refs: list[tuple[Any, Future]] = []  # (ObjectRef, its future) of the tasks submitted

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        remote = self._remotes.get(fn)
        if remote is None:
            remote = self._remotes[fn] = self._ray.remote(num_cpus=1)(fn)
        ref = remote.remote(*args, **kwargs)
        future = ref.future()
        self._refs = [(r, f) for r, f in self._refs if not f.done()]
        self._refs.append((ref, future))
        return future

    def cpus(self) -> int:
        """How many tasks the cluster runs at once (its CPUs): the window of tasks to keep in flight."""
        return cluster_cpus()

    def _cancel(self) -> None:
        """Cancel (kill) the tasks not finished yet."""
        ray = self._ray
        if ray.is_initialized():
            for ref, future in self._refs:
                if future.done():
                    continue
                try:
                    ray.cancel(ref, force=True)
                except Exception:  # noqa: BLE001 - finished or already gone: nothing to cancel
                    pass
        self._refs = []

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if cancel_futures:
            self._cancel()
        self._refs = []
        if self._owns_ray and self._ray.is_initialized():
            self._ray.shutdown()
            self._owns_ray = False

    def terminate(self) -> None:
        """Abort: cancel the tasks in flight and shut down Ray if this pool or :func:`connect` started it
        in this process (the command is ending: Ray's helper processes must not outlive it)."""
        global _STARTED_HERE
        self._cancel()
        if (self._owns_ray or _STARTED_HERE) and self._ray.is_initialized():
            self._ray.shutdown()
        self._owns_ray = _STARTED_HERE = False
