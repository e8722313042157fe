"""Per-step data of a replayed game, for the HTML viewer.

A record is replayed from its seed (:func:`concordia_env.arena.records.replay_steps`) and each
state is reduced to a *frame*: one flat list of ints holding everything the page draws
(see :func:`frame_layout`): per player the coins, houses left, goods, hand and discard by card
type, the top discard, the colonists' places and the VP by god; the cities' goods and houses,
the provinces' bonus markers and the card display. The page gets the first frame in full and,
for every action, only the ``[index, value, ...]`` pairs that changed (a 2-player game of ~300
actions is a few tens of kB), and rebuilds every frame once when it loads.

The static part (map geometry in SVG pixels, names, card types, display prices, colours) comes
from the same sources as :mod:`concordia_env.display.picture`: its map geometry (north up), province
label places and colours are reused, not copied.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import engine as E
from ...board import display_price
from ...data import GOODS
from ...state import GOD_COLUMNS, GameState

VIEW_FORMAT = "concordia-env/replay-view"
VIEW_VERSION = 1

#: width of the map in SVG pixels (the page scales the SVG to fit)
MAP_WIDTH = 940.0
#: the tallest the map may be, in SVG pixels
MAP_MAX_HEIGHT = 700.0
#: one typographic point of the picture's label layout, in SVG pixels (labels are drawn at 10 px)
_PT_PX = 4.0 / 3.0


@dataclass(frozen=True)
class FrameLayout:
    """Where each named quantity sits in a frame: ``fields[name] = (offset, shape)``."""

    fields: dict[str, tuple[int, tuple[int, ...]]]
    size: int

    def get(self, frame: Any, name: str) -> np.ndarray:
        """The named quantity of ``frame`` (a sequence of ints) as an int array of its shape."""
        offset, shape = self.fields[name]
        count = int(np.prod(shape)) if shape else 1
        return np.asarray(frame[offset:offset + count], dtype=np.int64).reshape(shape)

    def to_json(self) -> dict[str, list[Any]]:
        """``{name: [offset, [shape...]]}`` for the page."""
        return {name: [off, list(shape)] for name, (off, shape) in self.fields.items()}


def frame_layout(num_players: int, num_cities: int, num_provinces: int) -> FrameLayout:
    """The frame layout of a game with these sizes (only the real players, cities and provinces)."""
    n = num_players
    spec: list[tuple[str, tuple[int, ...]]] = [
        ("current", ()), ("active", ()), ("phase", ()), ("turn", ()), ("pm", ()), ("concordia", ()),
        ("deck_left", ()),
        ("coins", (n,)), ("houses_left", (n,)), ("goods", (n, E.NG)), ("hand", (n, E.NT)),
        ("discard", (n, E.NT)), ("top", (n,)), ("colonist", (n, E.NCOL)), ("vp", (n, E.NGODS)),
        ("city_good", (num_cities,)), ("houses", (num_cities,)),
        ("marker_good", (num_provinces,)), ("marker_active", (num_provinces,)),
        ("display", (E.NDISP,)),
    ]
    fields: dict[str, tuple[int, tuple[int, ...]]] = {}
    offset = 0
    for name, shape in spec:
        fields[name] = (offset, shape)
        offset += int(np.prod(shape)) if shape else 1
    return FrameLayout(fields, offset)


def layout_for(state: GameState) -> FrameLayout:
    """The frame layout of ``state``'s game."""
    m = state.game.map
    return frame_layout(state.num_players, m.num_cities, len(m.province_names))


def frame_vector(state: GameState, layout: FrameLayout | None = None) -> np.ndarray:
    """``state`` as a frame: a flat int64 array laid out by ``layout`` (:func:`layout_for` by default)."""
    layout = layout or layout_for(state)
    n, m = state.num_players, state.game.map
    nc, npv = m.num_cities, len(m.province_names)
    parts = {
        "current": state.current_player, "active": state.active_player, "phase": state.phase,
        "turn": int(state.field("turn")), "pm": int(state.field("pm")), "concordia": int(state.field("concordia")),
        "deck_left": int(state.field("deck_len")) - int(state.field("deck_pos")),
        "coins": state.field("coins")[:n], "houses_left": state.field("houses_left")[:n],
        "goods": state.field("goods")[:n], "hand": state.field("hand")[:n], "discard": state.field("discard")[:n],
        "top": state.field("top")[:n], "colonist": state.field("colonist")[:n], "vp": state.score_breakdown(),
        "city_good": state.field("city_good")[:nc], "houses": state.field("houses")[:nc],
        "marker_good": state.field("marker_good")[:npv], "marker_active": state.field("marker_active")[:npv],
        "display": state.field("display"),
    }
    out = np.empty(layout.size, dtype=np.int64)
    for name, (offset, shape) in layout.fields.items():
        value = np.asarray(parts[name], dtype=np.int64).reshape(shape).ravel()  # a wrong size raises
        out[offset:offset + value.size] = value
    return out


def _delta(prev: np.ndarray, cur: np.ndarray) -> list[int]:
    """``[index, value, index, value, ...]`` of the entries of ``cur`` that differ from ``prev``."""
    idx = np.flatnonzero(prev != cur)
    out = np.empty(2 * idx.size, dtype=np.int64)
    out[0::2], out[1::2] = idx, cur[idx]
    return out.tolist()


def _board(state: GameState) -> dict[str, Any]:
    """The map in SVG pixels (y down): cities, routes as polylines, colonist spots, province labels."""
    from ..picture import _geometry, _province_labels

    g, m = state.game, state.game.map
    geo = _geometry(g)
    span = geo.hi - geo.lo
    pad = 0.04 * float(span.max())
    k = min(MAP_WIDTH / (float(span[0]) + 2 * pad), MAP_MAX_HEIGHT / (float(span[1]) + 2 * pad))
    width, height = (float(span[0]) + 2 * pad) * k, (float(span[1]) + 2 * pad) * k
    x0, y1 = float(geo.lo[0]) - pad, float(geo.hi[1]) + pad

    def px(x: float, y: float) -> list[float]:
        return [round((x - x0) * k, 1), round((y1 - y) * k, 1)]

    pt = _PT_PX / k  # one label-layout point in map units
    labels = _province_labels(g, geo, pt, (x0, x0 + width / k), (y1 - height / k, y1))
    # the geometry lists land and sea curves separately, each in ``g.routes`` order
    land, sea = iter(geo.land_lines), iter(geo.sea_lines)
    routes = []
    for rid, a, b in g.routes:
        curve = next(land) if rid < E.NL else next(sea)
        routes.append({"id": int(rid), "land": bool(rid < E.NL), "a": int(a), "b": int(b),
                       "points": [px(x, y) for x, y in curve], "spot": px(*geo.route_point[rid]),
                       "name": g.route_name(rid)})
    return {
        "width": round(width, 1), "height": round(height, 1),
        "cities": [{"name": m.city_names[c], "xy": px(*geo.city[c]), "province": int(m.city_province[c])}
                   for c in range(m.num_cities)],
        "routes": routes,
        "provinces": [{"name": m.province_names[q], "numeral": m.province_numerals[q], "label": px(lx, ly)}
                      for q, (lx, ly) in enumerate(labels)],
    }


def _cards(state: GameState) -> dict[str, Any]:
    """Card types (name, god), the type of each card id and its Senator's price at each display position."""
    g = state.game
    tables = g.tables
    card_type = [int(t) for t in tables[E.T_CARD_TYPE:E.T_CARD_TYPE + E.NCARD]]
    prices: list[list[list[Any]] | None] = []
    for cid, t in enumerate(card_type):
        if t < 0:
            prices.append(None)
            continue
        row = []
        for j in range(E.NDISP):
            cost, n_any = display_price(tables, j, cid)
            row.append([[k for k in range(E.NG) for _ in range(int(cost[k]))], int(n_any)])
        prices.append(row)
    return {"types": [{"name": t.name, "god": t.god} for t in g.components.card_types],
            "card_type": card_type, "prices": prices}


def static_view(state: GameState, agents: list[str], seed: int) -> dict[str, Any]:
    """What a page needs to draw any moment of ``state``'s game (set up with ``seed``) besides the
    frames: the setup (``map``, ``players``, ``seed`` as a string of digits, since a JavaScript number rounds
    integers from 2**53 on, ``intermediate_scoring``, ``agents`` by seat), ``layout`` and
    ``frame_size`` (see :func:`frame_layout`), ``board``, ``cards`` and the names and colours of
    goods, gods, phases and players. Shared by the replay viewer and the play page of
    ``concordia serve`` (:mod:`concordia_env.server`)."""
    from ..picture import _COIN_EDGE, _COIN_FACE, _LAND_COLOUR, _ROMA_COLOUR, _SEA_COLOUR, GOOD_COLOURS, PLAYER_COLOURS

    layout = layout_for(state)
    return {
        "format": VIEW_FORMAT, "version": VIEW_VERSION,
        "map": state.map_name, "players": state.num_players, "seed": str(int(seed)),
        "intermediate_scoring": bool(state.field("intermediate")), "agents": list(agents),
        "layout": layout.to_json(), "frame_size": layout.size,
        "board": _board(state), "cards": _cards(state),
        "goods": list(GOODS), "good_colours": list(GOOD_COLOURS), "gods": list(GOD_COLUMNS),
        "player_colours": list(PLAYER_COLOURS[:state.num_players]),
        "phases": list(E.PHASE_NAMES),
        "storehouse_slots": int(state.game.components.storehouse_slots),
        "colonist_city_places": E.NC,  # a colonist's place: city c below this, route (place - NC) above
        "colours": {"land": _LAND_COLOUR, "sea": _SEA_COLOUR, "roma": _ROMA_COLOUR,
                    "coin_face": _COIN_FACE, "coin_edge": _COIN_EDGE},
    }


def replay_data(record: dict[str, Any]) -> dict[str, Any]:
    """Replay a (validated) record and return everything the viewer page needs, as JSON-ready data.

    Keys: those of :func:`static_view` (the setup copied from the record); ``result`` copied from
    the record; ``first`` (the frame before any action); ``deltas`` (per action, the changed
    ``[index, value, ...]`` pairs after it); ``steps`` (per action: ``player`` who chose it,
    ``turn`` number from 1, ``text`` describing it, ``action`` id); ``turn_start`` (step index
    where each turn starts). ``ValueError`` names the first illegal action of a corrupt record."""
    from ...arena.records import initial_state, replay_steps

    start = initial_state(record)
    layout = layout_for(start)
    prev = frame_vector(start, layout)
    first = prev.tolist()
    deltas: list[list[int]] = []
    players: list[int] = []
    turns: list[int] = []
    texts: list[str] = []
    turn_before = int(start.field("turn"))
    turn_start: list[int] = []
    for step in replay_steps(record):
        if not turns or turn_before + 1 != turns[-1]:
            turn_start.append(step.index)
        players.append(step.player)
        turns.append(turn_before + 1)
        texts.append(step.text)
        cur = frame_vector(step.state, layout)
        deltas.append(_delta(prev, cur))
        prev = cur
        turn_before = int(step.state.field("turn"))
    data = static_view(start, list(record["agents"]), record["seed"])
    data.update({
        "result": record["result"], "first": first, "deltas": deltas,
        "steps": {"player": players, "turn": turns, "text": texts, "action": [int(a) for a in record["actions"]]},
        "turn_start": turn_start,
    })
    return data


def frames(data: dict[str, Any]) -> list[list[int]]:
    """Every frame of :func:`replay_data`'s output (the first, then one after each action),
    rebuilt from the deltas as the page does."""
    cur = list(data["first"])
    out = [cur[:]]
    for delta in data["deltas"]:
        for i in range(0, len(delta), 2):
            cur[delta[i]] = delta[i + 1]
        out.append(cur[:])
    return out
