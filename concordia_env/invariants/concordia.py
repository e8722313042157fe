"""The Concordia card and the end of the game: the card goes to the first player to build all
houses or to buy the last card, and ends the game after the turn before its holder's."""

from __future__ import annotations

from .. import engine as E
from .._internal.jit import kernel
from .base import GROUP, declare, emit
from .deck import buying

C_CONC_HOUSES = declare(50, "Concordia after the last house", "field 'concordia': player {a} has built all houses "
                        "but nobody holds the Concordia card")
C_CONC_CARDS = declare(51, "Concordia after the last card", "field 'concordia': deck and display are empty but "
                       "nobody holds the Concordia card")
C_CONC_UNEARNED = declare(52, "Concordia earned", "field 'concordia': player {a} holds the Concordia card with "
                          "houses left while cards remain to buy")
C_OVER_NO_CONC = declare(53, "Concordia at the end", "field 'concordia': the game is over but nobody holds the "
                         "Concordia card")
C_OVER_ACTIVE = declare(54, "last turn", "field 'active': the game ended after the turn of player {b} (before "
                        "Concordia holder {c}) but active is {a}")


@kernel(group=GROUP, inline="always")
def _check_unclaimed(s, out, k, no_houses, exhausted):
    """Nobody holds the card: nobody has built all houses (``no_houses``, -1: nobody), the cards
    are not all bought (``exhausted``) and the game is not over."""
    if no_houses >= 0:
        k = emit(out, k, C_CONC_HOUSES, no_houses, 0, 0, 0, 0)
    if exhausted:
        k = emit(out, k, C_CONC_CARDS, 0, 0, 0, 0, 0)
    if s[E.O_PHASE] == E.PH_OVER:
        k = emit(out, k, C_OVER_NO_CONC, 0, 0, 0, 0, 0)
    return k


@kernel(group=GROUP, inline="always")
def check_concordia(s, out, k, deck_ok, shown, no_houses):
    """The Concordia card (when ``concordia`` is in range): ``no_houses`` is the last player with
    no house left (-1: none), ``shown`` the cards on the display, its count valid when ``deck_ok``."""
    n = s[E.O_NPLAYERS]
    ph = s[E.O_PHASE]
    p = s[E.O_ACTIVE]
    conc = s[E.O_CONCORDIA]
    dpos = s[E.O_DECK_POS]
    dlen = s[E.O_DECK_LEN]
    if not -1 <= conc < n:
        return k
    if conc == -1:
        exhausted = deck_ok and dpos == dlen and shown == 0 and not buying(s)
        k = _check_unclaimed(s, out, k, no_houses, exhausted)
    elif deck_ok and not (s[E.O_HOUSES_LEFT + conc] == 0 or (dpos == dlen and shown == 0)):
        k = emit(out, k, C_CONC_UNEARNED, conc, 0, 0, 0, 0)
    if ph == E.PH_OVER and conc >= 0 and 0 <= p < n and p != (conc + n - 1) % n:
        k = emit(out, k, C_OVER_ACTIVE, p, (conc + n - 1) % n, conc, 0, 0)
    return k



