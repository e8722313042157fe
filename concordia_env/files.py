"""Moved: this is :mod:`concordia_env._internal.files` now.

The package's internals are together in the private package :mod:`concordia_env._internal`. For one
release this module keeps ``import concordia_env.files`` working by re-exporting the public names of
the new module; import them from there instead. It holds no code of its own: to patch an attribute
(a test's monkeypatch), patch the new module.
"""

from __future__ import annotations

from ._internal.files import (
    FILE_MODE,
    NEW_FILE_MODE,
    current_umask,
    file_mode,
    npz_bytes,
    write_bytes_atomic,
    write_json_atomic,
    write_text_atomic,
)
from ._internal.moved import moved as _moved

__all__ = [
    "FILE_MODE", "NEW_FILE_MODE", "current_umask", "file_mode", "npz_bytes", "write_bytes_atomic",
    "write_json_atomic", "write_text_atomic",
]

_moved("concordia_env.files", "concordia_env._internal.files")
