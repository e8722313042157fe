"""The decision context: the action under way fits the phase and the card the active player
has just played, its counters are consistent, and an overflow choice is a real choice."""

from __future__ import annotations

from .. import engine as E
from .._internal.jit import kernel
from .base import GROUP, Row, declare, emit, popcount
from .tables import X_DIPLOMAT

# ------------------------------------------------------------------ the action under way and its card
C_CTX_KIND = declare(55, "action in phase", "field 'ctx_kind': action {a:kind} ({a}) cannot be under way in phase "
                     "{b:phase}")
C_TRIB_DISCARD = declare(63, "Tribunus discard", "field 'discard': player {a} is carrying out the Tribunus but has "
                         "cards on the discard pile")
C_COPY_SOURCE = declare(64, "Diplomat source", "field 'top': player {a}'s Diplomat carries out {b:kind}, but no other "
                        "player's discard pile shows it")


def _active_top_message(r: Row) -> str:
    shown = "an empty discard pile" if r.b == -1 else r.names.ctype(r.b)
    return (f"field 'top': active player {r.a} shows {shown}, neither the card of the "
            f"{r.names.kind(r.c)} action under way nor a Diplomat")


C_ACTIVE_TOP = declare(62, "active player's card", _active_top_message)


@kernel(group=GROUP, inline="always")
def _kind_fits(ph, kind):
    """Whether action ``kind`` may be under way in phase ``ph``."""
    if ph == E.PH_TRIBUNUS:
        return kind == E.K_TRIBUNUS
    if ph == E.PH_ARCHITECTUS:
        return kind == E.K_ARCHITECTUS
    if ph == E.PH_PRAEFECTUS or ph == E.PH_KEEP:
        # a specialist produces one kind of good, which never leaves an overflow choice
        return kind == E.K_PRAEFECTUS
    if ph == E.PH_MERCATOR:
        return kind == E.K_MERCATOR3 or kind == E.K_MERCATOR5
    if ph == E.PH_COLONUS:
        return kind == E.K_COLONUS
    if ph == E.PH_DIPLOMAT:
        return kind == E.K_DIPLOMAT
    if ph == E.PH_BUY:
        return kind == E.K_SENATOR or kind == E.K_CONSUL
    if ph == E.PH_PAY:
        return kind == E.K_SENATOR
    return True


@kernel(group=GROUP, inline="always")
def _copied(s, T, p, kind):
    """Whether another player than ``p`` shows a card of action ``kind`` (a Diplomat may copy it)."""
    for q in range(s[E.O_NPLAYERS]):
        tq = s[E.O_TOP + q]
        if q != p and 0 <= tq < E.NT and T[E.T_TYPE_KIND + tq] == kind:
            return True
    return False


@kernel(group=GROUP, inline="always")
def _check_card_played(s, T, X, out, k, p, kind):
    """Active player ``p`` has just played the card of action ``kind``, or a Diplomat copying it."""
    ph = s[E.O_PHASE]
    if ph == E.PH_TRIBUNUS:
        for t in range(E.NT):
            if s[E.O_DISCARD + p * E.NT + t] != 0:
                return emit(out, k, C_TRIB_DISCARD, p, 0, 0, 0, 0)
        return k
    top = s[E.O_TOP + p]
    if 0 <= top < E.NT:
        if X[X_DIPLOMAT + top]:
            if ph != E.PH_DIPLOMAT and not _copied(s, T, p, kind):
                k = emit(out, k, C_COPY_SOURCE, p, kind, 0, 0, 0)
        elif T[E.T_TYPE_KIND + top] != kind:
            k = emit(out, k, C_ACTIVE_TOP, p, top, kind, 0, 0)
    elif top == -1:
        k = emit(out, k, C_ACTIVE_TOP, p, top, kind, 0, 0)
    return k


# ------------------------------------------------------------------ the counters of the action
def _merc_both_message(r: Row) -> str:
    return (f"fields 'ctx_sold'/'ctx_bought': goods {r.names.goods(r.a & r.b)} both sold and bought "
            "in one Mercator")


def _merc_kinds_message(r: Row) -> str:
    return (f"fields 'ctx_sold'/'ctx_bought': Mercator traded {r.names.goods(r.a | r.b)}, "
            "more than 2 kinds of goods")


C_MERC_BOTH = declare(56, "Mercator sells or buys", _merc_both_message)
C_MERC_KINDS = declare(57, "Mercator kinds", _merc_kinds_message)
C_ARCH_POINTS = declare(58, "Architectus points", "field 'ctx_points': {a} movement points left but only {b} "
                        "colonists on the board")
C_BUY_COUNT = declare(59, "cards bought", "fields 'ctx_bought_pos'/'ctx_buys_left': {a} cards bought + {b} buys "
                      "left, should total {c}")
C_CONSUL_FLAG = declare(60, "Consul", "field 'ctx_consul' is {a} during {b:kind}")
C_PAY_LEFT = declare(61, "goods to pay", "field 'ctx_pay_left' is {a} while paying '?' goods (must be >= 1)")


@kernel(group=GROUP, inline="always")
def _check_mercator(s, out, k):
    sold = s[E.O_SOLD]
    bought = s[E.O_BOUGHT]
    if 0 <= sold < (1 << E.NG) and 0 <= bought < (1 << E.NG):
        if sold & bought:
            k = emit(out, k, C_MERC_BOTH, sold, bought, 0, 0, 0)
        if popcount(sold | bought) > 2:
            k = emit(out, k, C_MERC_KINDS, sold, bought, 0, 0, 0)
    return k


@kernel(group=GROUP, inline="always")
def _check_architectus(s, out, k, p):
    onb = 0
    for i in range(E.NCOL):
        if s[E.O_COLONIST + p * E.NCOL + i] >= 0:
            onb += 1
    if s[E.O_POINTS] > onb:
        k = emit(out, k, C_ARCH_POINTS, s[E.O_POINTS], onb, 0, 0, 0)
    return k


@kernel(group=GROUP, inline="always")
def _check_purchase(s, out, k, kind):
    consul = 1 if kind == E.K_CONSUL else 0
    if s[E.O_CONSUL] != consul:
        k = emit(out, k, C_CONSUL_FLAG, s[E.O_CONSUL], kind, 0, 0, 0)
    total = 1 if consul else 2
    nb = popcount(s[E.O_BOUGHT_POS] & ((1 << E.NDISP) - 1))
    if nb + s[E.O_BUYS_LEFT] != total:
        k = emit(out, k, C_BUY_COUNT, nb, s[E.O_BUYS_LEFT], total, 0, 0)
    if s[E.O_PHASE] == E.PH_PAY and s[E.O_PAY_LEFT] < 1:
        k = emit(out, k, C_PAY_LEFT, s[E.O_PAY_LEFT], 0, 0, 0, 0)
    return k


@kernel(group=GROUP)
def check_action(s, T, X, out, k):
    """The action under way (outside the card choice and the end; when ``active`` and
    ``ctx_kind`` are in range): it fits the phase and the card played, and its counters agree."""
    n = s[E.O_NPLAYERS]
    ph = s[E.O_PHASE]
    p = s[E.O_ACTIVE]
    kind = s[E.O_KIND]
    if ph == E.PH_PLAY or ph == E.PH_OVER or not (0 <= kind < E.NK and 0 <= p < n):
        return k
    if not _kind_fits(ph, kind):
        return emit(out, k, C_CTX_KIND, kind, ph, 0, 0, 0)
    k = _check_card_played(s, T, X, out, k, p, kind)
    if ph == E.PH_MERCATOR:
        k = _check_mercator(s, out, k)
    elif ph == E.PH_ARCHITECTUS:
        k = _check_architectus(s, out, k, p)
    elif ph == E.PH_BUY or ph == E.PH_PAY:
        k = _check_purchase(s, out, k, kind)
    return k


# ------------------------------------------------------------------ the overflow choice
def _keep_message(r: Row) -> str:
    if r.a < 0:
        return "field 'ctx_keep_player' is -1 while a storehouse overflow is being resolved"
    return (f"field 'incoming': player {r.a} must choose goods to keep but receives {r.b} goods of "
            f"{r.c} kinds with {r.d} free slots (needs >= 2 kinds and 0 < free slots < goods)")


C_KEEP = declare(65, "overflow choice", _keep_message)
C_INCOMING_RESOLVED = declare(77, "goods stored in turn order", "field 'incoming': player {a} still has goods "
                              "waiting though production is stored in turn order from active player {c} and player "
                              "{b} is choosing now")


@kernel(group=GROUP, inline="always")
def _check_stored_before(s, out, k, x):
    """Goods are stored in turn order from the active player: those before ``x`` have none waiting."""
    n = s[E.O_NPLAYERS]
    p = s[E.O_ACTIVE]
    for o in range(n):
        q = (p + o) % n
        if q == x:
            break
        for g in range(E.NG):
            if s[E.O_INCOMING + q * E.NG + g] != 0:
                k = emit(out, k, C_INCOMING_RESOLVED, q, x, p, 0, 0)
                break
    return k


@kernel(group=GROUP)
def check_keep(s, T, out, k):
    """In an overflow choice, ``ctx_keep_player`` (when in range) has goods of 2 kinds or more
    waiting, more than the free slots, and the players before them have none."""
    if s[E.O_PHASE] != E.PH_KEEP:
        return k
    n = s[E.O_NPLAYERS]
    x = s[E.O_KEEP_PLAYER]
    if x == -1:
        return emit(out, k, C_KEEP, x, 0, 0, 0, 0)
    if not 0 <= x < n:
        return k
    total = 0
    kinds = 0
    for g in range(E.NG):
        v = s[E.O_INCOMING + x * E.NG + g]
        total += v
        if v > 0:
            kinds += 1
    free = E.free_slots(s, T, x)
    if not (kinds >= 2 and 0 < free < total):
        k = emit(out, k, C_KEEP, x, total, kinds, free, 0)
    if 0 <= s[E.O_ACTIVE] < n:
        k = _check_stored_before(s, out, k, x)
    return k



