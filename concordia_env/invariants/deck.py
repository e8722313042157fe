"""The deck and the display: the deck holds the cards of the decks the player count uses, once
each, the ones still to draw in stacking order; the display shows drawn cards, left-aligned."""

from __future__ import annotations

from .. import engine as E
from .._internal.jit import kernel
from .base import GROUP, declare, emit
from .tables import X_CARD_DECK, X_DECK_LEN, X_DECK_OK

# ------------------------------------------------------------------ the deck
C_DECK_LEN = declare(39, "deck length", "field 'deck_len' is {a}, {c} players use {b} cards")
C_DECK_POS = declare(40, "deck position", "field 'deck_pos' is {a}, outside {b}..{c}")
C_DECK_CARD = declare(41, "deck card", "field 'deck': position {a} holds {b:card}, not a card of the decks {c} "
                      "players use")
C_DECK_DUP = declare(42, "deck card once", "field 'deck': position {a} holds {b:card}, already at position {c}")
C_DECK_PAD = declare(43, "deck padding", "field 'deck': position {a} lies past deck_len but holds {b} (must be -1)")
C_DECK_ORDER = declare(75, "deck order", "field 'deck': position {a} still to draw holds {b:card} of deck {b:deck}, "
                       "below {d:card} of deck {d:deck} at position {c} (the decks are stacked I on top, then II, ...)")


@kernel(group=GROUP, inline="always")
def _check_deck_size(s, X, out, k):
    """``deck_len`` and ``deck_pos`` fit the player count; returns ``(k, ok)``."""
    n = s[E.O_NPLAYERS]
    dlen = s[E.O_DECK_LEN]
    dpos = s[E.O_DECK_POS]
    want_len = X[X_DECK_LEN + n]
    ok = True
    if dlen != want_len:
        k = emit(out, k, C_DECK_LEN, dlen, want_len, n, 0, 0)
        ok = False
    lo = E.NDISP if want_len > E.NDISP else want_len
    if dpos < lo or dpos > want_len:
        k = emit(out, k, C_DECK_POS, dpos, lo, want_len, 0, 0)
        ok = False
    return k, ok


@kernel(group=GROUP, inline="always")
def _in_order(X, prev, cid):
    """Whether card ``cid``, still to draw after card ``prev``, lies in the same deck or a later one."""
    return X[X_CARD_DECK + cid] >= X[X_CARD_DECK + prev]


@kernel(group=GROUP)
def check_deck(s, X, out, k, pos_of):
    """The deck's cards; fills ``pos_of`` (the deck position of each card id, -1: none).
    Returns ``(k, deck_ok)``: ``deck_ok`` when its length, position and cards are right, so
    ``deck[:deck_pos]`` holds valid card ids, once each."""
    n = s[E.O_NPLAYERS]
    dpos = s[E.O_DECK_POS]
    want_len = X[X_DECK_LEN + n]
    k, deck_ok = _check_deck_size(s, X, out, k)
    pos_of[:] = -1
    prev_pos = -1  # last valid position still to draw
    for i in range(E.NCARD):
        cid = s[E.O_DECK + i]
        if i >= want_len:
            if cid != -1:
                k = emit(out, k, C_DECK_PAD, i, cid, 0, 0, 0)
            continue
        if cid < 0 or cid >= E.NCARD or X[X_DECK_OK + n * E.NCARD + cid] == 0:
            k = emit(out, k, C_DECK_CARD, i, cid, n, 0, 0)
            deck_ok = False
        elif pos_of[cid] >= 0:
            k = emit(out, k, C_DECK_DUP, i, cid, pos_of[cid], 0, 0)
            deck_ok = False
        else:
            pos_of[cid] = i
            # cards still to draw come in stacking order: deck I on top, then II, ... (not a
            # stricter "the undrawn cards are the bottom of the stack": scenario.set_display
            # lays out puzzle displays with cards taken from anywhere in the deck)
            if i >= dpos:
                if prev_pos >= 0 and not _in_order(X, s[E.O_DECK + prev_pos], cid):
                    k = emit(out, k, C_DECK_ORDER, i, cid, prev_pos, s[E.O_DECK + prev_pos], 0)
                prev_pos = i
    return k, deck_ok


# ------------------------------------------------------------------ the display
C_DISPLAY_CARD = declare(44, "display card", "field 'display': position {a} holds {b}, not a card id (-1..{last_card})")
C_DISPLAY_UNDRAWN = declare(45, "display card drawn", "field 'display': position {a} holds {b:card}, which is not "
                            "among deck[:deck_pos={c}]")
C_DISPLAY_DUP = declare(46, "display card once", "field 'display': position {a} holds {b:card} a second time")
C_DISPLAY_GAP = declare(47, "display gap", "field 'display': position {a} is empty but position {b} holds a card "
                        "(cards slide left)")
C_DISPLAY_NOT_FULL = declare(48, "display full", "field 'display': only {a} cards shown while the deck still holds "
                             "{b} (refill to 7)")
C_DISPLAY_BOUGHT = declare(49, "display bought", "field 'display': position {a} was bought this turn "
                           "(ctx_bought_pos) but shows {b:card}")


@kernel(group=GROUP, inline="always")
def buying(s):
    """Whether a Senator or Consul is buying: positions bought this turn stay empty until it ends."""
    ph = s[E.O_PHASE]
    return ph == E.PH_BUY or ph == E.PH_PAY


@kernel(group=GROUP)
def check_display(s, out, k, deck_ok, pos_of, seen):
    """The display's cards, drawn from the deck (when ``deck_ok``: ``pos_of`` known); marks them
    in ``seen`` (per card id). Returns ``(k, display_ok, cards shown)``: ``display_ok`` when
    they are card ids, once each, drawn from the deck."""
    dpos = s[E.O_DECK_POS]
    bought_pos = s[E.O_BOUGHT_POS] if buying(s) else 0
    shown = 0
    gap = -1
    seen[:] = 0
    display_ok = True
    for j in range(E.NDISP):
        cid = s[E.O_DISPLAY + j]
        was_bought = (bought_pos >> j) & 1
        if cid == -1:
            if not was_bought and gap < 0:
                gap = j
            continue
        if was_bought:
            k = emit(out, k, C_DISPLAY_BOUGHT, j, cid, 0, 0, 0)
        if cid < 0 or cid >= E.NCARD:
            k = emit(out, k, C_DISPLAY_CARD, j, cid, 0, 0, 0)
            display_ok = False
            continue
        if gap >= 0:
            k = emit(out, k, C_DISPLAY_GAP, gap, j, 0, 0, 0)
            gap = E.NDISP  # report one gap only
        if seen[cid]:
            k = emit(out, k, C_DISPLAY_DUP, j, cid, 0, 0, 0)
            display_ok = False
        seen[cid] = 1
        shown += 1
        if deck_ok and (pos_of[cid] < 0 or pos_of[cid] >= dpos):
            k = emit(out, k, C_DISPLAY_UNDRAWN, j, cid, dpos, 0, 0)
            display_ok = False
    return k, display_ok, shown


@kernel(group=GROUP, inline="always")
def check_display_full(s, out, k, deck_ok, shown):
    """Outside a purchase the display is refilled to 7 while the deck lasts (when ``deck_ok``)."""
    dlen = s[E.O_DECK_LEN]
    dpos = s[E.O_DECK_POS]
    if deck_ok and not buying(s) and shown < E.NDISP and dpos < dlen:
        k = emit(out, k, C_DISPLAY_NOT_FULL, shown, dlen - dpos, 0, 0, 0)
    return k



