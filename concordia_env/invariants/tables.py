"""The auxiliary table ``X`` the checkers read beside the state: per map, what the components
and the player count allow (built once per map by :func:`aux`)."""

from __future__ import annotations

from functools import cache

import numpy as np

from .. import engine as E
from ..board import deck_card_ids, stacked_decks
from ..game import get_game

NLETTERS = 4  # city letters (A, B, C, D) at most

_AUX_FIELDS: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("players_ok", (E.MAXP + 1,)),  # 1 if that many players may play this map
    ("num_cities", ()), ("num_provinces", ()), ("num_land", ()), ("num_sea", ()),
    ("letter", (E.NC,)),  # letter index of each city, -1 for Roma and padding
    ("letter_used", (NLETTERS,)),
    ("tokens", (NLETTERS, E.NG)),  # city tokens per letter and good
    ("deck_ok", (E.MAXP + 1, E.NCARD)),  # card id belongs to the decks used by n players
    ("deck_len", (E.MAXP + 1,)),
    ("start_hand", (E.NT,)),  # starting cards per type
    ("tribunus", ()), ("senator", ()),  # card types that are never bought or lost
    ("diplomat", (E.NT,)),  # 1 for Diplomat card types
    ("max_any", ()),  # most '?' under one display position
    ("card_deck", (E.NCARD,)),  # deck (0 for I, 1 for II, ...) of each card id
)
AUX_LAYOUT: dict[str, tuple[int, tuple[int, ...], int]] = {}
_off = 0
for _name, _shape in _AUX_FIELDS:
    _size = int(np.prod(_shape)) if _shape else 1
    AUX_LAYOUT[_name] = (_off, _shape, _size)
    _off += _size
AUX_SIZE = _off
X_PLAYERS_OK = AUX_LAYOUT["players_ok"][0]
X_NCITIES = AUX_LAYOUT["num_cities"][0]
X_NPROV = AUX_LAYOUT["num_provinces"][0]
X_NLAND = AUX_LAYOUT["num_land"][0]
X_NSEA = AUX_LAYOUT["num_sea"][0]
X_LETTER = AUX_LAYOUT["letter"][0]
X_LETTER_USED = AUX_LAYOUT["letter_used"][0]
X_TOKENS = AUX_LAYOUT["tokens"][0]
X_DECK_OK = AUX_LAYOUT["deck_ok"][0]
X_DECK_LEN = AUX_LAYOUT["deck_len"][0]
X_START = AUX_LAYOUT["start_hand"][0]
X_TRIB = AUX_LAYOUT["tribunus"][0]
X_SEN = AUX_LAYOUT["senator"][0]
X_DIPLOMAT = AUX_LAYOUT["diplomat"][0]
X_MAX_ANY = AUX_LAYOUT["max_any"][0]
X_CARD_DECK = AUX_LAYOUT["card_deck"][0]


@cache
def aux(map_name: str) -> np.ndarray:
    """The auxiliary table of ``map_name`` (int32, :data:`AUX_SIZE`)."""
    game = get_game(map_name)
    m, comp = game.map, game.components
    X = np.zeros(AUX_SIZE, dtype=np.int32)

    def put(name, value):
        E.put_field(X, AUX_LAYOUT, name, value)

    put("players_ok", [int(n in m.players) for n in range(E.MAXP + 1)])
    put("num_cities", m.num_cities)
    put("num_provinces", len(m.province_names))
    put("num_land", len(m.land_routes))
    put("num_sea", len(m.sea_routes))
    letters = sorted(comp.city_tokens)
    if len(letters) > NLETTERS:
        raise ValueError(f"components list {len(letters)} city letters, validation expects at most {NLETTERS}")
    put("letter", [letters.index(m.city_letters[c]) if 0 < c < m.num_cities else -1 for c in range(E.NC)])
    put("letter_used", [int(L in m.letters) for L in letters] + [0] * (NLETTERS - len(letters)))
    tok = np.zeros((NLETTERS, E.NG), dtype=np.int32)
    for i, L in enumerate(letters):
        tok[i] = comp.city_tokens[L]
    put("tokens", tok)
    ids = deck_card_ids(comp)
    ok = np.zeros((E.MAXP + 1, E.NCARD), dtype=np.int32)
    lens = np.zeros(E.MAXP + 1, dtype=np.int32)
    for n in comp.decks_per_player_count:
        if 0 <= n <= E.MAXP:
            for cards in stacked_decks(comp, n):
                ok[n, cards] = 1
            lens[n] = sum(len(cards) for cards in stacked_decks(comp, n))
    put("deck_ok", ok)
    put("deck_len", lens)
    # setup stacks the decks a player count uses in order, deck I on top: the deck of each
    # card lets the kernel check the order of the cards still to draw
    card_deck = np.full(E.NCARD, -1, dtype=np.int32)
    for i, cids in enumerate(ids.values()):
        card_deck[cids] = i
    put("card_deck", card_deck)
    start = np.zeros(E.NT, dtype=np.int32)
    for t in comp.starting_hand:
        start[t] += 1
    put("start_hand", start)
    actions = [t.action for t in comp.card_types]
    put("tribunus", actions.index("tribunus"))
    put("senator", actions.index("senator"))
    put("diplomat", [int(a == "diplomat") for a in actions])
    put("max_any", max(n_any for _, n_any in comp.display_costs))
    return X
