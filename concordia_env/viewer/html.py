"""Moved: this is :mod:`concordia_env.display.viewer.html` now.

The display code (text, menus, the board picture, the replay viewer) is together in
:mod:`concordia_env.display`. For one release this module keeps ``import concordia_env.viewer.html``
working by re-exporting the public names of the new module; import them from there instead. It holds
no code of its own: to patch an attribute (a test's monkeypatch), patch the new module.
"""

from __future__ import annotations

from ..display.viewer.html import (
    DATA_MARK,
    DRAW_CSS_MARK,
    DRAW_JS_MARK,
    TITLE_MARK,
    assemble,
    asset,
    embed_json,
    fill,
    page_title,
    replay_data,
    replay_html,
    template,
    write_replay_html,
    write_text_atomic,
)

__all__ = [
    "DATA_MARK", "DRAW_CSS_MARK", "DRAW_JS_MARK", "TITLE_MARK", "assemble", "asset", "embed_json", "fill",
    "page_title", "replay_data", "replay_html", "template", "write_replay_html", "write_text_atomic",
]
