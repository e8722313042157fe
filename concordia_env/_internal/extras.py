"""How a message tells the user to install one of the package's optional extras.

The package is installed from its source folder (it is not on the package index), so the hint
names the extra as pip takes it there: ``pip install ".[train]"`` run in the concordia-env
folder. One function, so every "missing package" message says it the same way.

Every import of an optional dependency in the package (torch, stable-baselines3, matplotlib,
Ray, ...) sits in a :func:`requires` block, at module level or in the function that needs it::

    with requires("train", "concordia_env.training.value"):
        import torch

so that a missing package is one :class:`MissingExtraError` line naming the extra, e.g.
``concordia_env.training.value needs torch, which is not installed: pip install ".[train]" in the
concordia-env source folder``. :func:`require_installed` checks the same without importing (for
a constructor that should refuse up front what a later call would need). The few modules that
checked their package before this block existed (the Ray backend, RLlib, OpenSpiel, the GPU env,
stable-baselines3 model files, the training commands) say it in their own words, through
:func:`install_hint` too. ``tests/test_install.py`` hides each optional package in turn and
checks every one of these messages.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

#: import name -> the name pip installs it by, where they differ (the message names the latter)
PACKAGE_NAMES = {"stable_baselines3": "stable-baselines3", "sb3_contrib": "sb3-contrib", "pyspiel": "open-spiel",
                 "open_spiel": "open-spiel", "numba_cuda": "numba-cuda"}


class MissingExtraError(ModuleNotFoundError):
    """An optional dependency is missing or broken: the message is one line naming the extra to
    install. ``name`` is the module that failed (as ``ModuleNotFoundError``'s), ``extra`` the extra."""

    def __init__(self, message: str, *, name: str | None, extra: str) -> None:
        super().__init__(message, name=name)
        self.extra = extra


def install_hint(extra: str, alternative: str | None = None) -> str:
    """``pip install ".[EXTRA]"`` (in the concordia-env source folder), with ``alternative`` (the
    bare third-party package, say) after it when given."""
    hint = f'pip install ".[{extra}]" in the concordia-env source folder'
    return f"{hint} (or: {alternative})" if alternative else hint


def missing_extra(what: str, extra: str, exc: ImportError, alternative: str | None = None) -> MissingExtraError:
    """The one-line error for ``exc``, an import of the ``extra``'s package that failed while ``what``
    (a module, a feature) needed it."""
    module = (exc.name or "").split(".")[0]
    package = PACKAGE_NAMES.get(module, module) or f"the {extra} extra"
    # not installed, or installed but failing to import (a broken build, a missing sub-dependency)
    state = "is not installed" if type(exc) is ModuleNotFoundError and exc.name else f"cannot be imported ({exc})"
    return MissingExtraError(f"{what} needs {package}, which {state}: {install_hint(extra, alternative)}",
                             name=exc.name, extra=extra)


@contextmanager
def requires(extra: str, what: str, alternative: str | None = None) -> Iterator[None]:
    """Turn an ``ImportError`` raised in the block into :func:`missing_extra`'s one line (the block
    holds only imports of the extra's packages). A :class:`MissingExtraError` from a module the
    block imports passes through as it is: it names its extra already."""
    try:
        yield
    except MissingExtraError:
        raise
    except ImportError as exc:
        raise missing_extra(what, extra, exc, alternative) from None


def require_installed(modules: Sequence[str], extra: str, what: str, alternative: str | None = None) -> None:
    """:class:`MissingExtraError` unless every one of ``modules`` can be found, without importing them."""
    for module in modules:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a parent package missing, or a module with no spec
            found = False
        if not found:
            raise missing_extra(what, extra, ModuleNotFoundError(f"No module named {module!r}", name=module),
                                alternative)
