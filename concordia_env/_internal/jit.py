"""Compiled kernels: where numba caches them, the one decorator that defines them, and compiling
them ahead of use with a progress report.

Every kernel of the package is defined with :func:`kernel` (never numba's ``njit(cache=True)``
directly), so one decision governs where compiled code goes.

Where compiled code is cached
-----------------------------
Decided once per process, when the first kernel is defined (:func:`cache_decision`):

1. ``CONCORDIA_CACHE_DIR``, if set, used as is;
2. else numba's own setting, ``NUMBA_CACHE_DIR``, if set, used as is;
3. else ``platformdirs.user_cache_dir("concordia-env")`` (``~/.cache/concordia-env`` on Linux,
   or under ``XDG_CACHE_HOME``), in a subfolder naming this package's, numba's and Python's
   versions (:func:`version_tag`): an upgrade starts afresh and old folders can simply be deleted.

The directory is tried with a real write (root ignores permission bits, and ``os.access``
cannot see a read-only mount), and a directory inside the installed package is refused. When
it cannot be used, kernels compile without an on-disk cache and one line on stderr says so.
numba is never left to choose: its own fallbacks are the ``__pycache__`` next to the sources
(inside site-packages, where ``pip uninstall`` leaves it behind) and, when nothing is
writable, an error ("cannot cache function ...: no locator available") at import.

Keeping compiled code fresh
---------------------------
numba's on-disk cache is keyed on a kernel's own source file only, but a cached kernel
carries compiled copies of every kernel it calls and every constant it reads, from other
files. So all of the package's compiled code is tied to one stamp, :func:`sources_stamp`:
a CRC-32 over every source file that defines kernels (found by their ``@kernel(`` or
``@rule(`` decorators), every file of ``rules/`` (the state layout's offsets), and every
package module those files import (constants such as ``rewards.VP_SCALE``). When a file's
first kernel is defined, :func:`ensure_fresh` compares the stamp its cached code was built
for, kept in a small marker file beside that code, with the current one; when they differ it
deletes that file's cached code before numba can load it, then writes the new stamp. A file
whose module is not imported is checked when it is. Nothing is listed by hand: a new kernel
module is covered by its decorator.

Compiling ahead of use
----------------------
:func:`compile_kernels` compiles (or loads from the cache) the entry points of the named
:data:`GROUPS`, the kernels called from Python, callees first; the kernels they call compile
with them, and numba's compile events, which come only for real compiles, count them all on a
progress bar. A warm start just loads the entry points and prints nothing. The command-line
entry points call it before they play, so a first run says what it is doing (and for about
how long) instead of looking hung, and compiles only what the command's agents use.

Library use (``concordia_env.env(...)``, ``new_game``, ``reset``/``step`` in a notebook) compiles
each kernel on its first call instead. So that it does not look hung either, the first kernel
of the package that really compiles in a process (numba's compile events come only for real
compiles, never for cache loads) prints one line on stderr, once, with a rough duration
(:data:`LIBRARY_COMPILE_SECONDS`), when a person is watching: on a terminal or in a Jupyter
notebook (``CONCORDIA_COMPILE_NOTICE=always`` prints it to a pipe or a log too, ``never`` not at
all); a warm start prints nothing. Within :func:`compile_kernels`
its own notice is the one printed, so a process never says it twice.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, TextIO, TypeVar

import numba
from numba.core import event as numba_event

#: overrides the cache directory (used as is); an empty value counts as unset
CACHE_ENV = "CONCORDIA_CACHE_DIR"
#: the installed package: compiled code never goes in here
PACKAGE_DIR = Path(__file__).resolve().parent.parent
APP_NAME = "concordia-env"

F = TypeVar("F", bound=Callable[..., Any])

# numba's configuration module sets its attributes at run time, and its typing stubs do not
# cover every way njit is called: both are used through Any
_numba_config: Any = numba.config
_numba_njit: Any = numba.njit


# ------------------------------------------------------------------ where to cache
@dataclass(frozen=True)
class CacheDecision:
    """Where kernels are cached: ``path``, or nowhere when it is ``None`` (then ``problem`` says why).

    ``source`` names what chose the directory tried (an environment variable, or
    "the user cache directory")."""

    path: Path | None
    source: str
    tried: Path
    problem: str | None = None

    @property
    def warning(self) -> str | None:
        """The one line printed on stderr when compiled code cannot be cached, else ``None``."""
        if self.path is not None:
            return None
        return (f"concordia-env: cannot use {self.tried} ({self.source}) to cache compiled kernels: "
                f"{self.problem}; compiled code will not be cached, so every run compiles again "
                f"(set {CACHE_ENV} to a writable directory)")


def version_tag() -> str:
    """The versioned subfolder of the default cache directory, e.g. ``0.1.0-numba0.60.0-cpython-311``."""
    from .. import __version__

    return f"{__version__}-numba{numba.__version__}-{sys.implementation.cache_tag}"


def default_cache_dir() -> Path:
    """The per-user cache directory (:mod:`platformdirs`) with the :func:`version_tag` subfolder."""
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False)) / version_tag()


def _inside_package(path: Path) -> bool:
    resolved = path.resolve()
    return resolved == PACKAGE_DIR or PACKAGE_DIR in resolved.parents


def writable_problem(path: Path) -> str | None:
    """Why ``path`` cannot hold the cache (``None``: it can), found by creating it and writing a file."""
    if _inside_package(path):
        return f"it is inside the package directory {PACKAGE_DIR}"
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path) as probe:  # a real write: permission bits lie for root
            probe.write(b"concordia-env")
            probe.flush()
    except OSError as exc:
        return f"{type(exc).__name__}: {exc.strerror or exc}"
    return None


def decide_cache(environ: Mapping[str, str] | None = None) -> CacheDecision:
    """Choose the cache directory (see the module docstring); creates it, prints nothing.

    ``environ`` (default ``os.environ``, with numba's ``NUMBA_CACHE_DIR`` as numba read it)
    is for tests."""
    if environ is None:
        ours, numbas = os.environ.get(CACHE_ENV, ""), _numba_config.CACHE_DIR or ""
    else:
        ours, numbas = environ.get(CACHE_ENV, ""), environ.get("NUMBA_CACHE_DIR", "")
    if ours:
        tried, source = Path(ours).expanduser(), CACHE_ENV
    elif numbas:
        tried, source = Path(numbas).expanduser(), "NUMBA_CACHE_DIR"
    else:
        tried, source = default_cache_dir(), "the user cache directory"
    tried = tried.absolute()
    problem = writable_problem(tried)
    return CacheDecision(None if problem else tried, source, tried, problem)


@cache
def cache_decision() -> CacheDecision:
    """This process's :func:`decide_cache`, made once; prints its warning line (if any) on stderr."""
    decision = decide_cache()
    if decision.warning:
        print(decision.warning, file=sys.stderr, flush=True)
    return decision


# ------------------------------------------------------------------ keeping compiled code fresh
_DEFINES_KERNELS = re.compile(rb"^@(?:kernel|rule)\(", re.MULTILINE)
_PACKAGE_IMPORT = re.compile(rb"^\s*from (\.+)([\w.]*) import ([\w, ()]+)", re.MULTILINE)
#: suffix of the marker file holding the stamp a source file's cached code was built for
STAMP_SUFFIX = ".concordia-stamp"


def _imported_files(path: Path, text: bytes) -> set[Path]:
    """The package's source files that ``path`` imports from (relative imports, as written)."""
    found: set[Path] = set()
    for dots, module, names in _PACKAGE_IMPORT.findall(text):
        base = path.parent
        for _ in range(len(dots) - 1):
            base = base.parent
        target = base.joinpath(*module.decode().split(".")) if module else base
        candidates = [target.with_suffix(".py"), target / "__init__.py"]
        if target.is_dir():  # "from . import encoding": the names may be modules
            candidates += [target / f"{n.strip(' ()')}.py" for n in names.decode().split(",")]
        found.update(c for c in candidates if c.is_file())
    return found


@cache
def kernel_sources() -> tuple[Path, ...]:
    """Every source file the package's compiled code is built from (see the module docstring),
    sorted by its path inside the package."""
    files: set[Path] = set((PACKAGE_DIR / "rules").glob("*.py"))
    for path in PACKAGE_DIR.rglob("*.py"):
        text = path.read_bytes()
        if _DEFINES_KERNELS.search(text):
            files.add(path)
            files.update(_imported_files(path, text))
    return tuple(sorted(files, key=lambda p: p.relative_to(PACKAGE_DIR).as_posix()))


@cache
def sources_stamp() -> int:
    """CRC-32 over the paths and contents of :func:`kernel_sources`."""
    stamp = 0
    for path in kernel_sources():
        stamp = zlib.crc32(path.relative_to(PACKAGE_DIR).as_posix().encode(), stamp)
        stamp = zlib.crc32(path.read_bytes(), stamp)
    return stamp


def cached_code_folder(source: Path, cache: Path) -> Path:
    """The folder of ``cache`` where numba keeps the compiled code of the kernels of ``source``."""
    from numba.core.caching import UserProvidedCacheLocator

    return cache / UserProvidedCacheLocator.get_suitable_cache_subpath(str(source))


def stamp_marker(source: Path, cache: Path) -> Path:
    """The marker file holding the stamp the cached code of ``source``'s kernels was built for."""
    return cached_code_folder(source, cache) / (source.stem + STAMP_SUFFIX)


_CHECKED: set[Path] = set()


def ensure_fresh(source: Path, cache: Path | None) -> None:
    """Delete the cached code of ``source``'s kernels when it was built for other sources than
    today's (:func:`sources_stamp`), then record today's stamp; once per file and process, before
    numba loads anything of it. Deleting comes first, so an interrupted refresh is redone."""
    if cache is None or source in _CHECKED:
        return
    _CHECKED.add(source)
    marker, stamp = stamp_marker(source, cache), str(sources_stamp())
    try:
        if marker.read_text().strip() == stamp:
            return
    except OSError:
        pass
    folder = marker.parent
    for old in (*folder.glob(f"{source.stem}.*.nbi"), *folder.glob(f"{source.stem}.*.nbc")):
        with contextlib.suppress(OSError):
            old.unlink()
    try:
        from .files import write_text_atomic

        folder.mkdir(parents=True, exist_ok=True)
        write_text_atomic(marker, stamp + "\n")
    except OSError:  # a cache directory that became read-only: the next process checks again
        pass


# ------------------------------------------------------------------ defining kernels
@dataclass(frozen=True)
class Kernel:
    """A registered kernel: its group, name, numba dispatcher, and for an entry point (one called
    from Python) the argument types :func:`compile_kernels` compiles it for."""

    group: str
    name: str
    dispatcher: Any
    signature: str | None


#: every kernel defined so far, in definition order (callees before callers)
REGISTRY: list[Kernel] = []


def _njit(fn: Callable[..., Any], inline: str, signature: str | None, cache: Path | None) -> Any:
    """numba's dispatcher for ``fn``, cached under ``cache`` (``None``: not cached).

    numba picks a function's cache locator when the dispatcher is made, from
    ``numba.config.CACHE_DIR``; setting it only for that moment directs our kernels
    without redirecting any other package's numba cache in the process."""
    args = (signature,) if signature is not None else ()
    if cache is None:
        return _numba_njit(*args, cache=False, inline=inline)(fn)
    saved = _numba_config.CACHE_DIR
    _numba_config.CACHE_DIR = str(cache)
    try:
        dispatcher = _numba_njit(*args, cache=True, inline=inline)(fn)
    except RuntimeError:  # "no locator available": the directory went away since it was tried
        return _numba_njit(*args, cache=False, inline=inline)(fn)
    finally:
        _numba_config.CACHE_DIR = saved
    stats = getattr(dispatcher, "stats", None)  # none with NUMBA_DISABLE_JIT: a plain function
    where = stats.cache_path if stats is not None else None
    if stats is not None and not (where and Path(where).resolve().is_relative_to(cache.resolve())):
        # numba fell back to a location of its own (e.g. next to the sources): not there
        return _numba_njit(*args, cache=False, inline=inline)(fn)
    return dispatcher


def kernel(signature: str | None = None, *, group: str | None = None, inline: str = "never",
           exact: bool = False) -> Callable[[F], F]:
    """Decorator defining a compiled kernel (numba ``njit``, cached where :func:`cache_decision` says).

    Args:
        signature: for an entry point, a kernel called from Python, the argument types its
            callers pass, numba style without a return type (``"int32[::1], int32[::1], int64"``):
            :func:`compile_kernels` compiles it for them (numba still compiles other types on
            demand). Kernels only called by kernels have none: they compile as part of their
            callers, for the types those pass, and a warm start need not load them at all.
        group: the :data:`GROUPS` entry it belongs to (default: its module's).
        inline: numba's ``inline`` option.
        exact: compile ``signature`` (a full one, with its return type) now and only it:
            callers passing other integer types are converted rather than compiled again.
    """

    def wrap(fn: F) -> F:
        module = fn.__module__.rsplit(".", 1)[-1]
        full = signature if exact else None
        cache = cache_decision().path
        ensure_fresh(Path(fn.__code__.co_filename), cache)
        dispatcher = _njit(fn, inline, full, cache)
        # inlined kernels never compile on their own; exact ones are compiled already; with
        # NUMBA_DISABLE_JIT there is nothing to compile
        if inline != "always" and not exact and hasattr(dispatcher, "compile"):
            REGISTRY.append(Kernel(group or module, fn.__name__, dispatcher, signature))
        return dispatcher

    return wrap


# ------------------------------------------------------------------ compiling ahead of use
#: kernel groups: the modules defining them and the groups whose kernels they call
GROUPS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "engine": (("concordia_env.engine",), ()),  # legal actions, steps, scores
    "encoding": (("concordia_env.encoding",), ("engine",)),  # observations
    "vector": (("concordia_env.encoding", "concordia_env.vector"), ("encoding",)),  # batched env
    "validation": (("concordia_env.validation", "concordia_env.invariants"), ("engine",)),  # rule invariants
    "heuristic": (("concordia_env.agents.heuristic",), ("engine",)),
    "mcts": (("concordia_env.agents.mcts",), ("heuristic",)),
    "rollout": (("concordia_env.engine", "concordia_env.agents.mcts"), ("mcts",)),  # random playouts
    "afterstates": (("concordia_env.agents.afterstates",), ("encoding",)),  # learned agents' inputs
    "turns": (("concordia_env.turns",), ("heuristic", "encoding")),  # whole-turn candidates
    # az's simulations compiled whole, with the network's forward pass
    "az_search": (("concordia_env.agents.net_kernels", "concordia_env.agents.az_search"), ("mcts", "encoding")),
    # az over whole turns (az:turns=K): its simulations with the turns' candidates
    "turn_search": (("concordia_env.agents.turn_search",), ("az_search", "turns")),
}
#: rough cold compile seconds per group on an idle 2-core AMD EPYC (``python -m
#: concordia_env.tools.startup``): the low end of the first-run message's range
COMPILE_SECONDS: dict[str, float] = {
    "engine": 7.0, "rollout": 5.0, "encoding": 1.0, "vector": 2.0, "validation": 9.0,
    "heuristic": 4.0, "mcts": 12.0, "afterstates": 1.0, "turns": 10.0, "az_search": 8.0,
    "turn_search": 10.0,
}
#: the high end of the range is the low end times this: the same 2-core machine, busy with other
#: work, compiled ``concordia demo``'s kernels in 28-92 s against the 24 s the estimates add up to
BUSY_FACTOR = 4.0
#: the library notice's range, in seconds: the environment's kernels (engine and encoding) compiled
#: cold by ``concordia_env.env(...)``, ``reset`` and a game of ``step`` calls on the 2-core machine,
#: idle to busy (``python -m concordia_env.tools.startup --only env``)
LIBRARY_COMPILE_SECONDS: tuple[int, int] = (10, 40)
#: the start of every compile notice (the command line's and the library's)
NOTICE = "compiling the rules engine"
#: when library use prints its notice: ``auto`` (default) on a terminal or in a notebook, where a
#: silent wait looks hung; ``always`` (a batch job's log); ``never``
NOTICE_ENV = "CONCORDIA_COMPILE_NOTICE"
NOTICE_MODES = ("auto", "always", "never")


def _library_notice_wanted(stream: TextIO) -> bool:
    """Whether library use announces its compile on ``stream`` (see :data:`NOTICE_ENV`). ``auto``
    speaks to a person: a terminal, or a Jupyter kernel (whose stderr is no terminal); a pipe or a
    file (a test's captured output, a job's log) stays as the program wrote it."""
    mode = os.environ.get(NOTICE_ENV, "auto").strip().lower()
    if mode not in NOTICE_MODES:
        mode = "auto"  # a typo must not break the import of the package; auto is the documented default
    if mode != "auto":
        return mode == "always"
    isatty = getattr(stream, "isatty", None)
    return bool(callable(isatty) and isatty()) or "ipykernel" in sys.modules


def estimate_text(low: float, high: float | None = None) -> str:
    """``"about 24-96 s on a 2-core machine"``: a range, not a promise (``high`` defaults to
    ``low`` times :data:`BUSY_FACTOR`)."""
    low_s = max(1, round(low))
    high_s = max(low_s + 1, round(high if high is not None else low * BUSY_FACTOR))
    return f"about {low_s}-{high_s} s on a 2-core machine"


class _FirstUseNotice(numba_event.Listener):
    """The library's compile notice: registered with numba for the whole process when this module
    is imported (before any kernel is defined), it prints :data:`NOTICE` once, on stderr, when a
    kernel of this package first really compiles, unless :func:`compile_kernels` is at work
    (it prints its own, with an estimate for what it compiles)."""

    def __init__(self) -> None:
        self.printed = False
        self.quiet = 0  # > 0 while compile_kernels runs (nested calls count)

    def on_start(self, event: Any) -> None:
        if self.printed or self.quiet:
            return
        function = getattr(event.data.get("dispatcher"), "py_func", None)
        if (getattr(function, "__module__", None) or "").split(".")[0] != _PACKAGE:
            return  # another package's numba code: not ours to announce
        if not _library_notice_wanted(sys.stderr):
            return  # (not marked printed: the command line's own notice must still come)
        self.printed = True
        when = "first use only" if cache_decision().path is not None else "on every run: it cannot be cached"
        print(f"{NOTICE} ({when}, {estimate_text(*LIBRARY_COMPILE_SECONDS)})...", file=sys.stderr, flush=True)

    def on_end(self, event: Any) -> None:
        pass


_PACKAGE = __name__.split(".")[0]
FIRST_USE_NOTICE = _FirstUseNotice()
numba_event.register("numba:compile", FIRST_USE_NOTICE)


def resolve_groups(groups: Iterable[str]) -> list[str]:
    """``groups`` and every group they need, in :data:`GROUPS` order; ``ValueError`` for unknown ones."""
    wanted: set[str] = set()
    todo = list(groups)
    while todo:
        g = todo.pop()
        if g not in GROUPS:
            raise ValueError(f"unknown kernel group {g!r}; known: {', '.join(GROUPS)}")
        if g not in wanted:
            wanted.add(g)
            todo.extend(GROUPS[g][1])
    return [g for g in GROUPS if g in wanted]


def group_kernels(groups: Iterable[str]) -> list[Kernel]:
    """The registered kernels of ``groups`` (and what they need), importing their modules, callees first."""
    names = resolve_groups(groups)
    for g in names:
        for module in GROUPS[g][0]:
            importlib.import_module(module)
    order = {g: i for i, g in enumerate(names)}
    return sorted((k for k in REGISTRY if k.group in order), key=lambda k: order[k.group])


class _Progress(numba_event.Listener):
    """Listens to numba's compile events, which come only for real compiles (not cache loads):
    the first one prints the notice, then each of our kernels compiled (an entry point, or a
    kernel compiled as part of one) advances a tqdm bar on a terminal; a last line gives the time."""

    def __init__(self, groups: list[str], out: TextIO, cached: bool) -> None:
        self.out, self.cached = out, cached
        # until watch() knows the entry points (importing their modules may compile already), the
        # estimate is the groups' whole
        self.estimates = [sum(COMPILE_SECONDS.get(g, 1.0) for g in groups)]
        self.ours: dict[int, Kernel] = {}
        self.entries: list[Kernel] = []
        self.next_entry = 0
        self.started: float | None = None
        self.bar: Any = None
        self.compiling: list[str] = []  # ours being compiled now, callers first

    def watch(self, kernels: list[Kernel]) -> None:
        """The kernels to count (their modules imported): those not compiled yet, and the entry points."""
        self.ours = {id(k.dispatcher): k for k in kernels if not k.dispatcher.signatures}
        self.entries = [k for k in kernels if k.signature is not None]
        # a group's estimate shared among its entry points: what is left when compiling starts
        size = {g: sum(k.group == g for k in self.entries) for g in {k.group for k in self.entries}}
        self.estimates = [COMPILE_SECONDS.get(k.group, 1.0) / size[k.group] for k in self.entries]

    def on_start(self, event: Any) -> None:
        if self.started is None:
            self._announce()
        k = self.ours.get(id(event.data["dispatcher"]))
        if k is not None:
            self.compiling.append(f"{k.group}.{k.name}")
            self._show()

    def on_end(self, event: Any) -> None:
        if id(event.data["dispatcher"]) in self.ours:
            self.compiling.pop()
            if self.bar is not None:
                self.bar.update(1)
            self._show()

    def _show(self) -> None:
        if self.bar is not None and self.compiling:
            self.bar.set_postfix_str(self.compiling[-1])

    def _announce(self) -> None:
        self.started = time.perf_counter()
        if not FIRST_USE_NOTICE.printed:  # (the library's notice came first: not twice)
            FIRST_USE_NOTICE.printed = True
            when = "first run only" if self.cached else "on every run: it cannot be cached"
            estimate = estimate_text(sum(self.estimates[self.next_entry:]))
            print(f"{NOTICE} ({when}, {estimate})...", file=self.out, flush=True)
        if self.out.isatty() and self.ours:
            self._open_bar()

    def _open_bar(self) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=len(self.ours), unit="kernel", file=self.out, leave=False)

    def close(self) -> None:
        if self.started is None:
            return
        if self.bar is not None:
            self.bar.close()
        print(f"compiled in {time.perf_counter() - self.started:.1f} s", file=self.out, flush=True)


def compile_kernels(groups: Iterable[str] = tuple(GROUPS), *, progress: bool = True,
                    out: TextIO | None = None) -> int:
    """Compile (or load from the cache) the entry points of ``groups`` (see :data:`GROUPS`) and what they call.

    Entry points (kernels with a signature) are compiled in definition order, so a kernel's
    callees come before it; kernels only called by kernels compile as part of their callers.
    With ``progress``, the first kernel that really needs compiling prints one line on ``out``
    (default stderr) saying so; then a progress bar counts the kernels (on a terminal) and a
    last line gives the time taken. When everything comes from the cache nothing is printed.
    Returns how many kernels had to be compiled."""
    names = resolve_groups(groups)
    listener = _Progress(names, out or sys.stderr, cache_decision().path is not None)
    with contextlib.ExitStack() as stack:
        FIRST_USE_NOTICE.quiet += 1  # this notice (or none, without progress) instead of the library's
        stack.callback(_unquiet)
        if progress:
            # listening from before the imports: importing a kernel module may compile already,
            # and the notice must come before any compile work
            stack.enter_context(numba_event.install_listener("numba:compile", listener))
            stack.callback(listener.close)
        kernels = group_kernels(names)
        before = sum(_misses(k) for k in kernels)
        listener.watch(kernels)
        if listener.started is not None and listener.bar is None and (out or sys.stderr).isatty() and listener.ours:
            listener._open_bar()  # announced during the imports, before the kernels were known
        for i, k in enumerate(listener.entries):
            listener.next_entry = i
            k.dispatcher.compile(f"({k.signature},)" if k.signature else "()")
    return sum(_misses(k) for k in kernels) - before


def _unquiet() -> None:
    FIRST_USE_NOTICE.quiet -= 1


def _misses(k: Kernel) -> int:
    return sum(k.dispatcher.stats.cache_misses.values())
