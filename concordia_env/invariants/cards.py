"""The players' cards: hands and discard piles (checked per player, counting the cards of each
type held), the top of each discard pile, and the conservation of cards against the deck."""

from __future__ import annotations

from .. import engine as E
from .._internal.jit import kernel
from .base import GROUP, declare, emit
from .tables import X_SEN, X_START, X_TRIB

# ------------------------------------------------------------------ hands and discard piles (per player)
C_HAND_NEG = declare(9, "hand", "field 'hand': player {a} holds {c} of {b:ctype} (must be >= 0)")
C_DISCARD_NEG = declare(10, "discard pile", "field 'discard': player {a}'s discard pile holds {c} of {b:ctype} "
                        "(must be >= 0)")
C_CARDS_START = declare(74, "starting cards", "fields 'hand'/'discard': player {a} has {c} of {b:ctype} but started "
                        "with {d} (cards never leave their player)")
C_TRIB_COUNT = declare(14, "Tribunus", "fields 'hand'/'discard': player {a} has {b} Tribunus cards (exactly 1)")
C_TRIB_HAND = declare(15, "Tribunus in hand", "fields 'hand'/'discard': player {a}'s Tribunus is on the discard "
                      "pile (playing it takes it back at once)")
C_SEN_COUNT = declare(16, "Senator", "fields 'hand'/'discard': player {a} has {b} Senator cards (exactly 1)")


@kernel(group=GROUP, inline="always")
def _check_card_counts(s, X, out, k, q, held):
    """Player ``q``'s cards of each type: none negative, the starting ones kept. Adds them to
    ``held``; returns ``(k, cards_ok, cards on the discard pile)``, ``cards_ok`` when none is negative."""
    ok = True
    ndisc = 0
    for t in range(E.NT):
        a = s[E.O_HAND + q * E.NT + t]
        b = s[E.O_DISCARD + q * E.NT + t]
        if a < 0:
            k = emit(out, k, C_HAND_NEG, q, t, a, 0, 0)
            ok = False
        if b < 0:
            k = emit(out, k, C_DISCARD_NEG, q, t, b, 0, 0)
            ok = False
        held[t] += a + b
        ndisc += b
        # cards never leave a player: each keeps their own starting cards (Tribunus and
        # Senator have their own exactly-one checks)
        if a >= 0 and b >= 0 and t != X[X_TRIB] and t != X[X_SEN] and a + b < X[X_START + t]:
            k = emit(out, k, C_CARDS_START, q, t, a + b, X[X_START + t], 0)
    return k, ok, ndisc


@kernel(group=GROUP, inline="always")
def _check_one_of(s, X, out, k, q):
    """Player ``q`` has exactly one Tribunus, in hand, and exactly one Senator."""
    tr = X[X_TRIB]
    ntrib = s[E.O_HAND + q * E.NT + tr] + s[E.O_DISCARD + q * E.NT + tr]
    if ntrib != 1:
        k = emit(out, k, C_TRIB_COUNT, q, ntrib, 0, 0, 0)
    elif s[E.O_HAND + q * E.NT + tr] != 1:
        k = emit(out, k, C_TRIB_HAND, q, 0, 0, 0, 0)
    se = X[X_SEN]
    nsen = s[E.O_HAND + q * E.NT + se] + s[E.O_DISCARD + q * E.NT + se]
    if nsen != 1:
        k = emit(out, k, C_SEN_COUNT, q, nsen, 0, 0, 0)
    return k


# ------------------------------------------------------------------ the top of the discard pile (per player)
C_TOP_RANGE = declare(11, "top card", "field 'top': player {a} has top card {b}, not a card type (-1..{last_type})")
C_TOP_EMPTY = declare(12, "top card held", "field 'top': player {a}'s top card is {b:ctype} but the discard pile "
                      "holds none")
C_TOP_MISSING = declare(13, "top card missing", "field 'top': player {a}'s discard pile holds {b} cards but top is "
                        "-1 (empty)")


@kernel(group=GROUP, inline="always")
def _check_top(s, out, k, q, ndisc):
    top = s[E.O_TOP + q]
    if top < -1 or top >= E.NT:
        k = emit(out, k, C_TOP_RANGE, q, top, 0, 0, 0)
    elif top == -1:
        if ndisc > 0:
            k = emit(out, k, C_TOP_MISSING, q, ndisc, 0, 0, 0)
    elif s[E.O_DISCARD + q * E.NT + top] <= 0:
        k = emit(out, k, C_TOP_EMPTY, q, top, 0, 0, 0)
    return k


@kernel(group=GROUP, inline="always")
def check_player_cards(s, X, out, k, q, held):
    """Player ``q``'s hand, discard pile and its top card; adds the cards of each type to
    ``held``. Returns ``(k, cards_ok)``: ``cards_ok`` when no count is negative."""
    k, ok, ndisc = _check_card_counts(s, X, out, k, q, held)
    k = _check_top(s, out, k, q, ndisc)
    k = _check_one_of(s, X, out, k, q)
    return k, ok


# ------------------------------------------------------------------ conservation of cards
C_CARDS_TOTAL = declare(31, "cards conserved", "fields 'hand'/'discard': cards not conserved: {a} cards in hands "
                        "and discard piles, expected {b} (7 per player + {c} bought from the display)")
C_CARDS_TYPE = declare(32, "cards conserved by type", "fields 'hand'/'discard': cards not conserved: players hold "
                       "{b} of {a:ctype}, expected {c} (starting hands + cards bought)")


@kernel(group=GROUP)
def check_conservation(s, T, X, out, k, held, seen, want):
    """Every card in a hand or discard pile (``held``, per type) is a starting card or was bought:
    drawn from the deck and no longer shown (``seen``, per card id). Only when the deck, the
    display and every player's cards passed their checks; ``want`` is scratch."""
    n = s[E.O_NPLAYERS]
    nbought = 0
    for t in range(E.NT):
        want[t] = n * X[X_START + t]
    for i in range(s[E.O_DECK_POS]):
        cid = s[E.O_DECK + i]
        if not seen[cid]:
            want[T[E.T_CARD_TYPE + cid]] += 1
            nbought += 1
    tot_have = 0
    tot_want = 0
    for t in range(E.NT):
        tot_have += held[t]
        tot_want += want[t]
    if tot_have != tot_want:
        return emit(out, k, C_CARDS_TOTAL, tot_have, tot_want, nbought, 0, 0)
    for t in range(E.NT):
        if held[t] != want[t]:
            k = emit(out, k, C_CARDS_TYPE, t, held[t], want[t], 0, 0)
    return k



