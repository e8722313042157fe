"""Moved: this is :mod:`concordia_env._internal.extras` now.

The package's internals are together in the private package :mod:`concordia_env._internal`. For one
release this module keeps ``import concordia_env.extras`` working by re-exporting the public names
of the new module; import them from there instead. It holds no code of its own: to patch an
attribute (a test's monkeypatch), patch the new module.
"""

from __future__ import annotations

from ._internal.extras import install_hint
from ._internal.moved import moved as _moved

__all__ = ["install_hint"]

_moved("concordia_env.extras", "concordia_env._internal.extras")
