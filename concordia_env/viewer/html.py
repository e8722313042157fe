"""The viewer page: ``template.html`` (CSS and JavaScript, no external resources) with a record's
replay data embedded as JSON in a ``<script type="application/json">`` element."""

from __future__ import annotations

import html
import json
import os
from importlib import resources
from typing import Any

from ..files import write_text_atomic
from .snapshots import replay_data

#: the template's placeholders, replaced once each
DATA_MARK = "@@REPLAY_DATA@@"
TITLE_MARK = "@@TITLE@@"


def template() -> str:
    """The page template shipped with the package (``concordia_env/viewer/template.html``)."""
    return resources.files("concordia_env.viewer").joinpath("template.html").read_text(encoding="utf-8")


def embed_json(data: Any) -> str:
    """``data`` as compact JSON that is safe inside a ``<script>`` element: every ``<``, ``>``
    and ``&`` is written as a ``\\u`` escape, so no text can close the element or open a comment."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def page_title(record: dict[str, Any]) -> str:
    """The page's title: map, players, seed and agents of the record."""
    return (f"Concordia replay: {record['map'].capitalize()}, {record['players']} players, seed {record['seed']} "
            f"({', '.join(record['agents'])})")


def replay_html(record: dict[str, Any]) -> str:
    """The whole viewer page for a (validated) record: replays it, so ``ValueError`` names the
    first illegal action of a corrupt record."""
    data = replay_data(record)
    page = template()
    if page.count(DATA_MARK) != 1 or page.count(TITLE_MARK) != 1:  # pragma: no cover - a packaging fault
        raise ValueError("the viewer template is damaged (placeholders missing)")
    page = page.replace(TITLE_MARK, html.escape(page_title(record)))
    return page.replace(DATA_MARK, embed_json(data))


def write_replay_html(record: dict[str, Any], path: str | os.PathLike) -> int:
    """Write the viewer page for ``record`` to ``path`` atomically; returns its size in bytes.

    The page is built before anything is written, so a corrupt record leaves ``path`` untouched."""
    text = replay_html(record)
    write_text_atomic(path, text)
    return len(text.encode("utf-8"))
