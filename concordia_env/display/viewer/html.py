"""The viewer page: ``template.html`` (CSS and JavaScript, no external resources) with a record's
replay data embedded as JSON in a ``<script type="application/json">`` element.

The board drawing (``draw.js``, ``draw.css``) is shared with the play page of ``concordia serve``
(:mod:`concordia_env.server`): :func:`assemble` inlines it into a page template at the
``@@DRAW_JS@@`` and ``@@DRAW_CSS@@`` marks, so both pages draw the game with the same code and
the replay page stays one self-contained file."""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Mapping
from importlib import resources
from typing import Any

from ..._internal.files import write_text_atomic
from .snapshots import replay_data

#: the template's placeholders, replaced once each
DATA_MARK = "@@REPLAY_DATA@@"
TITLE_MARK = "@@TITLE@@"
#: where a page template takes the shared drawing code and style
DRAW_JS_MARK = "@@DRAW_JS@@"
DRAW_CSS_MARK = "@@DRAW_CSS@@"
_MARK = re.compile(r"@@[A-Z_]+@@")


def asset(package: str, name: str) -> str:
    """A text file shipped with ``package`` (e.g. ``concordia_env.display.viewer``, ``draw.js``)."""
    return resources.files(package).joinpath(name).read_text(encoding="utf-8")


def template() -> str:
    """The page template shipped with the package (``concordia_env/display/viewer/template.html``)."""
    return asset("concordia_env.display.viewer", "template.html")


def fill(page: str, values: Mapping[str, str]) -> str:
    """``page`` with every mark in ``values`` replaced, in one pass: text put in (a title, the data)
    is never searched for marks again. ``ValueError`` if a mark is not exactly once in the page
    (a damaged template)."""
    for mark in values:
        if page.count(mark) != 1:
            raise ValueError(f"the page template is damaged: {mark} appears {page.count(mark)} times, not once")
    return _MARK.sub(lambda m: values.get(m.group(0), m.group(0)), page)


def assemble(page: str, values: Mapping[str, str]) -> str:
    """A page template with the shared drawing (``draw.js``, ``draw.css``) inlined and the other
    ``values`` filled in (see :func:`fill`)."""
    shared = {DRAW_JS_MARK: asset("concordia_env.display.viewer", "draw.js"),
              DRAW_CSS_MARK: asset("concordia_env.display.viewer", "draw.css")}
    return fill(page, {**shared, **values})


def embed_json(data: Any) -> str:
    """``data`` as compact JSON that is safe inside a ``<script>`` element: every ``<``, ``>``
    and ``&`` is written as a ``\\u`` escape, so no text can close the element or open a comment."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def page_title(record: dict[str, Any]) -> str:
    """The page's title: map, players, seed and agents of the record."""
    return (f"Concordia replay: {record['map'].capitalize()}, {record['players']} players, seed {record['seed']} "
            f"({', '.join(record['agents'])})")


def replay_html(record: dict[str, Any], analysis: dict[str, Any] | None = None) -> str:
    """The whole viewer page for a (validated) record: replays it, so ``ValueError`` names the
    first illegal action of a corrupt record. ``analysis`` (optional,
    :func:`~concordia_env.display.analysis.analyse_record`) is embedded too, and the page offers its panel."""
    data = replay_data(record)
    if analysis is not None:  # (a page without it is as before)
        data["analysis"] = analysis
    return assemble(template(), {TITLE_MARK: html.escape(page_title(record)), DATA_MARK: embed_json(data)})


def write_replay_html(record: dict[str, Any], path: str | os.PathLike,
                      analysis: dict[str, Any] | None = None) -> int:
    """Write the viewer page for ``record`` (with ``analysis``, see :func:`replay_html`) to ``path``
    atomically; returns its size in bytes.

    The page is built before anything is written, so a corrupt record leaves ``path`` untouched."""
    text = replay_html(record, analysis)
    write_text_atomic(path, text)
    return len(text.encode("utf-8"))
