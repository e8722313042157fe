"""The frame's text parts: the title line, a block per player and the card display.

Every quantity comes from the package's own helpers: VP by god from
:meth:`~concordia_env.state.GameState.score_breakdown` (the scoring kernels), the ranking from
:meth:`~concordia_env.state.GameState.ranking`, storehouse use from ``engine.free_slots`` and
the Senator's price of each display position from :func:`concordia_env.board.display_price`,
as in the text rendering and the replay viewer.

What depends only on who a player is (their block's frame, chip, name, place in turn order,
the goods icons, the gods' names) and each card at each display position are drawn once and
cached as images; a frame pastes them and writes the numbers and tags of the moment.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from PIL import Image, ImageDraw

from ... import engine as E
from ...board import display_price
from ...state import GOD_COLUMNS
from .canvas import Canvas, blend, font, good_sprite, rgb, sprite
from .style import (
    BADGE_COLOURS,
    CARD_EDGE,
    CARD_FILL,
    CURRENT_FILL,
    FAINT,
    GOD_COLOURS,
    INK,
    LAND_RADIUS,
    PAGE,
    PANEL_EDGE,
    PANEL_FILL,
    PANEL_GAP,
    PANEL_MAX_BLOCK,
    PANEL_RECT,
    PLAYER_COLOURS,
    SEA_RADIUS,
    TITLE_XY,
    Layout,
)

_PAD = 8.0  # inner margin of a player's block
_TAG_TEXT = 11.0  # font size of a card tag
_TAG_H = 15.0
_TAG_LINE = 17.0
_TAG_GAP = 3.0
_LABEL_W = 50.0  # room for "hand" / "discard" before the tags
_GODS_H = 25.0  # the VP-by-god table: a row of names over a row of numbers
_BADGE_TEXT = 10.0
_MORE_FILL = "#e6e6e6"
# Rows of a block, from its top (design px): middle of the header, stats and goods rows, and of
# the first line of cards; the VP-by-god table sits at the bottom.
_HEADER_Y, _STATS_Y, _GOODS_Y, _CARDS_Y = 15.0, 39.0, 61.0, 80.0
_STORE_X = 44.0 * E.NG + 6  # where the colonists in the storehouse start, from the block's inner left


def _ordinal(i: int) -> str:
    return f"{i}{'st' if i == 1 else 'nd' if i == 2 else 'rd' if i == 3 else 'th'}"


@lru_cache(maxsize=2048)
def tag_image(text: str, fill: str, k: float, size: float = _TAG_TEXT, height: float = _TAG_H,
              outline: str = "", fg: str = INK, bold: bool = False) -> Image.Image:
    """A rounded tag (a card in a hand, a badge) with ``text``, as an RGBA image at scale ``k``.

    ``outline``: a 2-px frame of that colour (the top of a discard pile); otherwise a faint edge."""
    f = font("bold" if bold else "regular", max(4, round(size * k)))
    w = round(f.getlength(text) + 8 * k)
    h = max(4, round(height * k))
    ss = 3
    big = Image.new("RGBA", (w * ss, h * ss), (0, 0, 0, 0))
    edge = rgb(outline) if outline else blend("#000000", fill, 0.28)
    ImageDraw.Draw(big).rounded_rectangle((0, 0, w * ss - 1, h * ss - 1), radius=round(3.5 * k * ss), fill=fill,
                                          outline=edge, width=round((2.0 if outline else 0.8) * k * ss) or 1)
    small = big.convert("RGBa").reduce(ss).convert("RGBA")
    ImageDraw.Draw(small).text((w / 2, h / 2), text, font=f, fill=fg, anchor="mm")
    return small


def _paste_left(canvas: Canvas, image: Image.Image, x: float, y_mid: float) -> float:
    """Paste ``image`` with its left edge at ``x`` and vertical middle at ``y_mid``; returns its right end."""
    canvas.paste(image, (x + image.width / canvas.k / 2, y_mid))
    return x + image.width / canvas.k


# ------------------------------------------------------------------ title
def title_text(state) -> str:
    """The title line: map, players, turn, and who decides what (or the result)."""
    head = (f"Concordia — {state.game.map.name.capitalize()}, {state.num_players} players"
            f"  ·  turn {int(state.field('turn'))}")
    if state.is_terminal():
        w = state.winner()
        return f"{head}  ·  game over: player {w} wins with {state.scores()[w]} VP"
    return f"{head}  ·  player {state.current_player} to decide: {state.phase_name}"


def draw_title(canvas: Canvas, state) -> None:
    """The title line at the top left."""
    canvas.text(TITLE_XY, title_text(state), 15, INK, style="bold")


# ------------------------------------------------------------------ players
@dataclass(frozen=True)
class _Player:
    """What a player's block shows, read from the state once per frame."""

    p: int
    vp: list[int]  # by god, GOD_COLUMNS order
    coins: int
    houses_left: int
    used: int  # storehouse slots in use
    goods: list[int]
    store_land: int  # colonists waiting in the storehouse
    store_sea: int
    hand: list[int]  # count per card type
    discard: list[int]
    top: int  # card type on top of the discard pile, -1 if empty


def _players(state) -> list[_Player]:
    s, T = state.s, state.game.tables
    slots = state.game.components.storehouse_slots
    vp = state.score_breakdown()
    col = state.field("colonist")
    coins, houses_left, goods = state.field("coins"), state.field("houses_left"), state.field("goods")
    hand, discard, top = state.field("hand"), state.field("discard"), state.field("top")
    return [_Player(p, vp[p].tolist(), int(coins[p]), int(houses_left[p]), slots - int(E.free_slots(s, T, p)),
                    goods[p].tolist(), int((col[p, :3] < 0).sum()), int((col[p, 3:] < 0).sum()),
                    hand[p].tolist(), discard[p].tolist(), int(top[p]))
            for p in range(state.num_players)]


def block_height(num_players: int) -> float:
    """Height of each player's block: the panel shared out, at most ``PANEL_MAX_BLOCK``."""
    return min(PANEL_MAX_BLOCK, (PANEL_RECT[3] - PANEL_GAP * (num_players - 1)) / num_players)


def block_rect(p: int, num_players: int) -> tuple[float, float, float, float]:
    """(x0, y0, x1, y1) of player ``p``'s block, design px."""
    x, y, w, _h = PANEL_RECT
    h = block_height(num_players)
    top = y + p * (h + PANEL_GAP)
    return x, top, x + w, top + h


@lru_cache(maxsize=64)  # about 200 kB each: every seat of two games' sizes
def _block_ground(p: int, num_players: int, order: int, current: bool, k: float) -> tuple[Image.Image, float]:
    """What a player's block shows that depends only on who they are and whether they decide:
    the frame, colour chip, name, place in turn order, goods icons, the gods' names. Returns the
    image and where the header's badges start (design px from the block's left)."""
    x0, y0, x1, y1 = block_rect(p, num_players)
    image = Image.new("RGB", (round((x1 - x0) * k), round((y1 - y0) * k)), PAGE)
    c = Canvas(image, k, (x0, y0))
    c.rect((x0, y0, x1 - 1 / k, y1 - 1 / k), CURRENT_FILL if current else PANEL_FILL,
           PLAYER_COLOURS[p] if current else PANEL_EDGE, 3.0 if current else 1.0, radius=7)
    x, y = x0 + _PAD, y0 + _HEADER_Y
    c.paste(sprite("square", PLAYER_COLOURS[p], 16, k), (x + 8, y))
    x = c.text((x + 22, y), f"Player {p}", 14, INK, style="bold") + 6
    if order > 1:
        x = c.text((x, y + 1), f"plays {_ordinal(order)}", 11, FAINT) + 6
    gy = y0 + _GOODS_Y
    for g in range(E.NG):
        c.paste(good_sprite(g, 16, k), (x0 + _PAD + 44 * g + 8, gy))
    sx = x0 + _PAD + _STORE_X
    c.paste(sprite("circle", PLAYER_COLOURS[p], 2 * LAND_RADIUS + 1, k), (sx + 6, gy))
    c.paste(sprite("triangle", PLAYER_COLOURS[p], 2 * SEA_RADIUS + 1, k), (sx + 46, gy - 1))
    c.text((sx + 86, gy + 1), "in storehouse", 11, FAINT)
    gods_top = y1 - _GODS_H - 5
    w = (x1 - x0 - 2 * _PAD) / len(GOD_COLUMNS)
    for j, god in enumerate(GOD_COLUMNS):
        gx = x0 + _PAD + j * w
        c.rect((gx, gods_top, gx + w - 1, gods_top + _GODS_H), GOD_COLOURS[god], "#d0ccc0", 1.0)
        c.text((gx + w / 2, gods_top + 6.5), god, 9.5, "#3a3528", anchor="mm")
        c.rect((gx + 1, gods_top + 13, gx + w - 2, gods_top + _GODS_H - 1), "#ffffff")
    return image, x - x0


def _badges(state, p: int, rank: dict[int, int]) -> list[tuple[str, str]]:
    """(text, colour key) of the badges in player ``p``'s header, most important first."""
    out = []
    if p == state.current_player:
        out.append(("to decide", "decide"))
    if rank:
        out.append(("winner", "winner") if rank[p] == 0 else (f"{_ordinal(rank[p] + 1)} place", "turn"))
    if p == int(state.field("start_player")):
        out.append(("start player", "start"))
    if p == int(state.field("pm")):
        out.append(("Praefectus Magnus", "pm"))
    if p == int(state.field("concordia")):
        out.append(("Concordia", "concordia"))
    return out


def _draw_badges(canvas: Canvas, badges: list[tuple[str, str]], x: float, x_end: float, y: float) -> None:
    k = canvas.k

    def tag(text: str, colour: str) -> Image.Image:
        return tag_image(text, BADGE_COLOURS[colour], k, _BADGE_TEXT, 16, fg="#ffffff", bold=True)

    crowded = x + sum(tag(t, c).width / k + 4 for t, c in badges) > x_end
    for text, colour in badges:
        if crowded and text == "Praefectus Magnus":
            text = "Praef. Magnus"  # only when many badges crowd one header
        x = _paste_left(canvas, tag(text, colour), x, y) + 4


def _draw_stats(canvas: Canvas, pl: _Player, x: float, y: float, slots: int) -> None:
    x = canvas.text((x, y), f"{sum(pl.vp)} VP", 19, INK, style="bold") + 14
    x = canvas.text((x, y + 1), f"{pl.coins} sestertii", 12.5) + 14
    x = canvas.text((x, y + 1), f"{pl.houses_left} houses left", 12.5) + 14
    canvas.text((x, y + 1), f"storehouse {pl.used}/{slots}", 12.5, "#b3261e" if pl.used >= slots else INK)


def _draw_goods(canvas: Canvas, pl: _Player, x: float, y: float) -> None:
    for g in range(E.NG):
        v = pl.goods[g]
        canvas.text((x + 44 * g + 20, y + 1), str(v), 13, INK if v else "#a8a8a8", style="bold" if v else "regular")
    canvas.text((x + _STORE_X + 14, y + 1), f"×{pl.store_land}", 12.5)
    canvas.text((x + _STORE_X + 55, y + 1), f"×{pl.store_sea}", 12.5)


def _card_tags(state, counts: list[int], top: int) -> list[tuple[str, str, bool]]:
    """(text, background, is top) of the tags of a hand or discard pile: the top card first."""
    types = state.game.components.card_types
    order = ([top] if top >= 0 else []) + [t for t in range(len(counts)) if t != top]
    return [(types[t].name + (f" ×{counts[t]}" if counts[t] > 1 else ""), GOD_COLOURS[types[t].god], t == top)
            for t in order if counts[t] or t == top]


def _tag_widths(canvas: Canvas, tags: list[tuple[str, str, bool]]) -> list[float]:
    return [_tag(canvas, t).width / canvas.k for t in tags]


def _tag(canvas: Canvas, tag: tuple[str, str, bool]) -> Image.Image:
    text, fill, top = tag
    return tag_image(text, fill, canvas.k, outline="#000000" if top else "")


def _more(canvas: Canvas, n: int) -> Image.Image:
    return tag_image(f"+{n} more", _MORE_FILL, canvas.k)


def _rows(widths: list[float], width: float) -> list[int]:
    """The line of each tag when tags of these widths flow through ``width``."""
    x, line, out = 0.0, 0, []
    for w in widths:
        if x > 0 and x + w > width:
            line, x = line + 1, 0.0
        out.append(line)
        x += w + _TAG_GAP
    return out


def _shown(canvas: Canvas, widths: list[float], width: float, lines: int) -> int:
    """How many tags fit in ``lines`` lines, leaving room for "+n more" if some do not."""
    n = len(widths)
    for shown in range(n, -1, -1):
        extra = [_more(canvas, n - shown).width / canvas.k] if shown < n else []
        rows = _rows(widths[:shown] + extra, width)
        if not rows or rows[-1] < lines:
            return shown
    return 0


def _flow(canvas: Canvas, tags: list[tuple[str, str, bool]], x0: float, x1: float, y: float, lines: int) -> None:
    """Lay ``tags`` out from (x0, y) in at most ``lines`` lines; if they do not all fit, the last
    ones give way to a "+n more" tag."""
    widths = _tag_widths(canvas, tags)
    shown = _shown(canvas, widths, x1 - x0, lines)
    images = [_tag(canvas, t) for t in tags[:shown]]
    if shown < len(tags):
        images.append(_more(canvas, len(tags) - shown))
    rows = _rows([img.width / canvas.k for img in images], x1 - x0)
    x, row = x0, 0
    for img, r in zip(images, rows):
        if r != row:
            x, row = x0, r
        x = _paste_left(canvas, img, x, y + r * _TAG_LINE) + _TAG_GAP


def _draw_cards(canvas: Canvas, state, pl: _Player, x: float, xe: float, top: float, bottom: float) -> None:
    """The hand and the discard pile (its top first, outlined) as tags coloured by god."""
    lines = max(2, int((bottom - top - _TAG_H / 2) // _TAG_LINE) + 1)
    hand = _card_tags(state, pl.hand, -1)
    discard = _card_tags(state, pl.discard, pl.top)
    width = xe - x - _LABEL_W
    needed = _rows(_tag_widths(canvas, hand), width)[-1] + 1 if hand else 1
    hand_lines = min(needed, lines - 1)
    for label, tags, y, n in (("hand", hand, top, hand_lines),
                              ("discard", discard, top + hand_lines * _TAG_LINE, lines - hand_lines)):
        canvas.text((x, y), label, 11, FAINT)
        if tags:
            _flow(canvas, tags, x + _LABEL_W, xe, y, n)
        else:
            canvas.text((x + _LABEL_W, y), "none", 11, "#a0a0a0")


def draw_players(canvas: Canvas, state) -> None:
    """A block per player: header with badges, VP and stock, goods, hand, discard, VP by god."""
    n = state.num_players
    rank = {p: r for r, p in enumerate(state.ranking())} if state.is_terminal() else {}
    slots = state.game.components.storehouse_slots
    start = int(state.field("start_player"))
    for pl in _players(state):
        x0, y0, x1, y1 = block_rect(pl.p, n)
        ground, badge_x = _block_ground(pl.p, n, (pl.p - start) % n + 1, pl.p == state.current_player, canvas.k)
        canvas.paste_at(ground, (x0, y0))
        x, xe = x0 + _PAD, x1 - _PAD
        _draw_badges(canvas, _badges(state, pl.p, rank), x0 + badge_x, xe, y0 + _HEADER_Y)
        _draw_stats(canvas, pl, x, y0 + _STATS_Y, slots)
        _draw_goods(canvas, pl, x, y0 + _GOODS_Y)
        gods_top = y1 - _GODS_H - 5
        _draw_cards(canvas, state, pl, x, xe, y0 + _CARDS_Y, gods_top - 1)
        w = (xe - x) / len(GOD_COLUMNS)
        for j in range(len(GOD_COLUMNS)):
            canvas.text((x + j * w + w / 2, gods_top + 19), str(pl.vp[j]), 11.5, INK, style="bold", anchor="mm")


# ------------------------------------------------------------------ display
_DISPLAY_HEAD = 22.0  # the display's title line
_CARD_GAP = 6.0


def _head_height(layout: Layout) -> float:
    """The display's title: one line over a row of cards, two over a narrow column."""
    return _DISPLAY_HEAD if layout.display_columns > 1 else 2 * _DISPLAY_HEAD - 6


def card_box(layout: Layout, j: int) -> tuple[float, float, float, float]:
    """(x0, y0, x1, y1) of display position ``j`` in ``layout``, design px."""
    x, y, w, h = layout.display_rect
    cols = layout.display_columns
    rows = -(-E.NDISP // cols)
    head = _head_height(layout)
    cw = (w - _CARD_GAP * (cols - 1)) / cols
    ch = (h - head - _CARD_GAP * (rows - 1)) / rows
    r, c = divmod(j, cols)
    x0, y0 = x + c * (cw + _CARD_GAP), y + head + r * (ch + _CARD_GAP)
    return x0, y0, x0 + cw, y0 + ch


@lru_cache(maxsize=256)  # every card at every position of one map, about 70 kB each
def _card_image(game_name: str, cid: int, j: int, box: tuple[float, float, float, float], k: float) -> Image.Image:
    """Card ``cid`` at display position ``j`` (-1: the position is empty), drawn into ``box``."""
    from ...game import get_game

    x0, y0, x1, y1 = box
    image = Image.new("RGB", (round((x1 - x0) * k), round((y1 - y0) * k)), PAGE)
    c = Canvas(image, k, (x0, y0))
    edge = (x0, y0, x1 - 1 / k, y1 - 1 / k)
    if cid < 0:
        c.rect(edge, "#ffffff", "#b8b8b8", 1.0, radius=6)
        c.text(((x0 + x1) / 2, (y0 + y1) / 2), f"{j + 1}: empty", 11, "#a0a0a0", anchor="mm")
        return image
    g = get_game(game_name)
    ctype = g.components.card_types[int(g.tables[E.T_CARD_TYPE + cid])]
    tall = y1 - y0 > 120  # a portrait card (the Imperium row) gets larger type
    c.rect(edge, CARD_FILL, CARD_EDGE, 1.2, radius=6)
    c.rect((x0 + 3, y0 + 3, x1 - 3, y0 + 20), GOD_COLOURS[ctype.god], None, radius=4)
    c.text((x0 + 8, y0 + 11.5), str(j + 1), 11.5, INK, style="bold")
    c.text(((x0 + x1) / 2 + 4, y0 + 11.5), ctype.god, 10.5, "#3a3528", style="italic", anchor="mm")
    size = 14.0 if tall else 12.5
    lines = [ctype.name]
    if c.width(ctype.name, size, "bold") > x1 - x0 - 8 and " (" in ctype.name:
        head, tail = ctype.name.split(" (", 1)
        lines = [head, "(" + tail]
    token = 20.0 if tall else 17.0
    tok_y = y1 - token / 2 - (10 if tall else 5)
    mid = (y0 + 20 + tok_y - token / 2) / 2
    for i, line in enumerate(lines):
        c.text(((x0 + x1) / 2, mid + (i - (len(lines) - 1) / 2) * (size + 3)), line, size, INK, style="bold",
               anchor="mm")
    cost, n_any = display_price(g.tables, j, cid)
    units = [q for q in range(E.NG) for _ in range(int(cost[q]))] + [-1] * n_any
    step = min(token + 2, (x1 - x0 - token - 8) / max(len(units) - 1, 1))
    sx = (x0 + x1) / 2 - step * (len(units) - 1) / 2
    for i, q in enumerate(units):
        spr = good_sprite(q, token, k) if q >= 0 else sprite("square", "#ffffff", token, k, "?")
        c.paste(spr, (sx + i * step, tok_y))
    return image


def draw_display(canvas: Canvas, state, layout: Layout) -> None:
    """The seven display positions (card, god, the Senator's price there) and the deck."""
    x, y, w, _h = layout.display_rect
    left = int(state.field("deck_len")) - int(state.field("deck_pos"))
    canvas.text((x + 2, y + 9), "Card display", 12.5, INK, style="bold")
    if layout.display_columns > 1:
        canvas.text((x + 104, y + 9), "price = card + position; ? = any good", 11, FAINT)
        canvas.text((x + w - 2, y + 9), f"deck: {left} left", 12, INK, anchor="rm")
    else:
        canvas.text((x + 2, y + 25), f"deck: {left} left", 12, INK)
    display = state.field("display")
    for j in range(E.NDISP):
        box = card_box(layout, j)
        canvas.paste_at(_card_image(state.game.map.name, int(display[j]), j, box, canvas.k), box[:2])
