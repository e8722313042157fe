"""The replay viewer: a game record as one self-contained HTML page (``concordia replay --html``).

:func:`~concordia_env.display.viewer.snapshots.replay_data` replays a record and gathers what the page
shows at every step (compact per-step deltas of a flat frame vector, see
:mod:`concordia_env.display.viewer.snapshots`); :func:`~concordia_env.display.viewer.html.replay_html` embeds
that data in ``template.html`` (the page's CSS and JavaScript, no external resources) and
:func:`~concordia_env.display.viewer.html.write_replay_html` writes the page atomically.

The drawing itself (board, player panels, card display: ``draw.js`` and ``draw.css``) and the
static part of the data (:func:`~concordia_env.display.viewer.snapshots.static_view`) are shared with the
play page of ``concordia serve`` (:mod:`concordia_env.server`), which inlines the same files
(:func:`~concordia_env.display.viewer.html.assemble`).
"""

from __future__ import annotations

from .html import replay_html, write_replay_html
from .snapshots import FrameLayout, frame_layout, frame_vector, replay_data, static_view

__all__ = ["FrameLayout", "frame_layout", "frame_vector", "replay_data", "replay_html", "static_view", "write_replay_html"]
