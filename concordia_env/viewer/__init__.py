"""Moved: this is :mod:`concordia_env.display.viewer` now.

The display code (text, menus, the board picture, the replay viewer) is together in
:mod:`concordia_env.display`. For one release this package keeps ``import concordia_env.viewer``
working by re-exporting the public names of the new module; import them from there instead. It holds
no code of its own: to patch an attribute (a test's monkeypatch), patch the new module. Its
submodules (html, snapshots) are such re-exports too.
"""

from __future__ import annotations

from .._internal.moved import moved as _moved
from ..display.viewer import (
    FrameLayout,
    frame_layout,
    frame_vector,
    replay_data,
    replay_html,
    static_view,
    write_replay_html,
)
from . import html as html  # (the submodules: the package's own imports made them attributes)
from . import snapshots as snapshots

__all__ = [
    "FrameLayout", "frame_layout", "frame_vector", "replay_data", "replay_html", "static_view",
    "write_replay_html",
]

_moved("concordia_env.viewer", "concordia_env.display.viewer")
