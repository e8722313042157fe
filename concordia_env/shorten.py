"""Moved: this is :mod:`concordia_env._internal.shorten` now.

The package's internals are together in the private package :mod:`concordia_env._internal`. For one
release this module keeps ``import concordia_env.shorten`` working by re-exporting the public names
of the new module; import them from there instead. It holds no code of its own: to patch an
attribute (a test's monkeypatch), patch the new module.
"""

from __future__ import annotations

from ._internal.moved import moved as _moved
from ._internal.shorten import SHORT_DIGITS, cut_numbers, short_number

__all__ = ["SHORT_DIGITS", "cut_numbers", "short_number"]

_moved("concordia_env.shorten", "concordia_env._internal.shorten")
