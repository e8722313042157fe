"""Moved: this is :mod:`concordia_env._internal.threads` now.

The package's internals are together in the private package :mod:`concordia_env._internal`. For one
release this module keeps ``import concordia_env.threads`` working by re-exporting the public names
of the new module; import them from there instead. It holds no code of its own: to patch an
attribute (a test's monkeypatch), patch the new module.
"""

from __future__ import annotations

from ._internal.moved import moved as _moved
from ._internal.threads import blas_threads, one_blas_thread

__all__ = ["blas_threads", "one_blas_thread"]

_moved("concordia_env.threads", "concordia_env._internal.threads")
