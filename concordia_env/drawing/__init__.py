"""Moved: this is :mod:`concordia_env.display.drawing` now.

The display code (text, menus, the board picture, the replay viewer) is together in
:mod:`concordia_env.display`. For one release this package keeps ``import concordia_env.drawing``
working by re-exporting the public names of the new module; import them from there instead. It holds
no code of its own: to patch an attribute (a test's monkeypatch), patch the new module. Its
submodules (board, canvas, frame, geometry, labels, panels, style) are such re-exports too.
"""

from __future__ import annotations

from .._internal.moved import moved as _moved

_moved("concordia_env.drawing", "concordia_env.display.drawing")
