"""Drawing primitives on a Pillow image, in design pixels scaled by ``k``.

Every coordinate the layout code passes is in design pixels (the 1280x800 frame); a
:class:`Canvas` multiplies by its scale ``k`` when it draws, so one layout serves every size.

Text and pieces are cached as small images (a text's coverage mask, a token's RGBA sprite) and
pasted: Pillow lays out and rasterises a string in about 100 microseconds but pastes a cached
mask in a few, and a frame has a few hundred strings, almost all of which recur from frame to
frame. Pieces are drawn four times larger and reduced, so their edges are anti-aliased like the
text (Pillow's own shapes are not).

Fonts: DejaVu Sans 2.35 (regular, bold, oblique), shipped in the package's ``display/fonts/``
folder with its licence (``LICENSE_DEJAVU``: Bitstream Vera's permissive licence, DejaVu's
changes in the public domain), so the picture needs nothing but Pillow (matplotlib, which
carries the same files, is only in the ``plot`` extra). Pillow's bundled default font
(``ImageFont.load_default(size)``, Aileron Regular, no bold or italic, Pillow >= 10.1) only if
the files were removed. The basic layout engine is used everywhere, so the result does not
depend on whether Pillow was built with libraqm.
"""

from __future__ import annotations

import math
from functools import cache, lru_cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from .style import COIN_EDGE, COIN_FACE, DARK_GOODS, GOOD_COLOURS

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont
RGB = tuple[int, int, int]

FONT_FILES: dict[str, str] = {"regular": "DejaVuSans.ttf", "bold": "DejaVuSans-Bold.ttf",
                              "italic": "DejaVuSans-Oblique.ttf"}
_SUPERSAMPLE = 4  # sprites are drawn this many times larger, then reduced


def rgb(colour: str) -> RGB:
    """``"#rrggbb"`` as an (r, g, b) tuple."""
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def blend(colour: str, ground: str, alpha: float) -> RGB:
    """``colour`` at opacity ``alpha`` over ``ground``."""
    a, b = rgb(colour), rgb(ground)
    return tuple(round(alpha * x + (1 - alpha) * y) for x, y in zip(a, b))  # type: ignore[return-value]


#: the package's own copy of the fonts (see the module doc)
FONT_DIR = Path(__file__).resolve().parents[1] / "fonts"


def font_dir() -> Path | None:
    """The folder of the package's TrueType fonts; None if a file is missing (a trimmed install)."""
    if all((FONT_DIR / name).is_file() for name in FONT_FILES.values()):
        return FONT_DIR
    return None


@cache
def font(style: str, px: int) -> Font:
    """The font of ``style`` (``regular``, ``bold`` or ``italic``) at ``px`` pixels."""
    folder = font_dir()
    if folder is not None:
        return ImageFont.truetype(str(folder / FONT_FILES[style]), px, layout_engine=ImageFont.Layout.BASIC)
    return ImageFont.load_default(px)


@lru_cache(maxsize=8192)
def text_mask(text: str, style: str, px: int, anchor: str) -> tuple[Image.Image, int, int]:
    """Coverage mask of ``text`` and the offset of its top-left corner from the anchor point."""
    f = font(style, px)
    left, top, right, bottom = (int(v) for v in f.getbbox(text, anchor=anchor))
    mask = Image.new("L", (max(right - left, 1), max(bottom - top, 1)), 0)
    ImageDraw.Draw(mask).text((-left, -top), text, font=f, fill=255, anchor=anchor)
    return mask, left, top


@lru_cache(maxsize=4096)
def text_width(text: str, style: str, px: int) -> float:
    """Advance width of ``text`` in pixels."""
    return float(font(style, px).getlength(text))


def _reduce(big: Image.Image) -> Image.Image:
    """A supersampled RGBA drawing reduced to its size, alpha-correct (premultiplied)."""
    return big.convert("RGBa").reduce(_SUPERSAMPLE).convert("RGBA")


def _big(size: float, k: float) -> tuple[Image.Image, ImageDraw.ImageDraw, int, float]:
    """An empty square supersampled sprite of ``size`` design px at scale ``k`` (+1 px margin)."""
    side = max(3, math.ceil(size * k) + 2)
    big = Image.new("RGBA", (side * _SUPERSAMPLE, side * _SUPERSAMPLE), (0, 0, 0, 0))
    return big, ImageDraw.Draw(big), side, side * _SUPERSAMPLE / 2


@lru_cache(maxsize=512)
def sprite(kind: str, fill: str, size: float, k: float, letter: str = "", outline: str = "#000000",
           letter_fill: str = "#000000") -> Image.Image:
    """A piece as an RGBA image ``size`` design px across (plus a pixel of margin) at scale ``k``.

    ``kind``: ``square``, ``circle``, ``triangle`` (pointing up) or ``star``; ``letter`` is
    written in the middle in bold."""
    big, draw, _side, c = _big(size, k)
    r = size * k * _SUPERSAMPLE / 2
    width = max(1, round(0.9 * k * _SUPERSAMPLE))
    if kind == "square":
        draw.rounded_rectangle((c - r, c - r, c + r, c + r), radius=r * 0.18, fill=fill, outline=outline, width=width)
    elif kind == "circle":
        draw.ellipse((c - r, c - r, c + r, c + r), fill=fill, outline=outline, width=width)
    elif kind == "triangle":
        pts = [(c, c - r), (c + r * 0.95, c + r * 0.72), (c - r * 0.95, c + r * 0.72)]
        draw.polygon(pts, fill=outline)
        inset = width * 1.9
        draw.polygon([(c, c - r + inset), (c + r * 0.95 - inset * 0.87, c + r * 0.72 - inset * 0.5),
                      (c - r * 0.95 + inset * 0.87, c + r * 0.72 - inset * 0.5)], fill=fill)
    elif kind == "star":
        pts = [(c + (r if i % 2 == 0 else r * 0.45) * math.cos(-math.pi / 2 + i * math.pi / 5),
                c + (r if i % 2 == 0 else r * 0.45) * math.sin(-math.pi / 2 + i * math.pi / 5)) for i in range(10)]
        draw.polygon(pts, fill=fill, outline=outline, width=width)
    else:
        raise ValueError(f"unknown sprite kind {kind!r}")
    if letter:
        f = font("bold", max(4, round(size * k * _SUPERSAMPLE * 0.62)))
        draw.text((c, c + (r * 0.12 if kind == "triangle" else 0)), letter, font=f, fill=letter_fill, anchor="mm")
    return _reduce(big)


def good_sprite(good: int, size: float, k: float, kind: str = "square") -> Image.Image:
    """A good as a token in its colour with its initial (white on the dark goods)."""
    from ...data import GOODS

    return sprite(kind, GOOD_COLOURS[good], size, k, GOODS[good][0].upper(),
                  letter_fill="#ffffff" if good in DARK_GOODS else "#000000")


def coin_sprite(size: float, k: float) -> Image.Image:
    """The coins side of a bonus marker."""
    return sprite("circle", COIN_FACE, size, k, "$", outline=COIN_EDGE, letter_fill=COIN_EDGE)


class Canvas:
    """A Pillow RGB image drawn on in design pixels; ``k`` image pixels per design pixel.

    ``origin``: the design point at the image's top-left corner (a part of the frame drawn on
    its own image, to be cached and pasted)."""

    def __init__(self, image: Image.Image, k: float, origin: tuple[float, float] = (0.0, 0.0)) -> None:
        self.image = image
        self.k = k
        self.ox, self.oy = origin
        self.draw = ImageDraw.Draw(image)

    def _xy(self, x: float, y: float) -> tuple[int, int]:
        return round((x - self.ox) * self.k), round((y - self.oy) * self.k)

    def text(self, xy: tuple[float, float], text: str, size: float, fill: str = "#1d1b16",
             style: str = "regular", anchor: str = "lm") -> float:
        """Write ``text`` (Pillow anchor, e.g. ``lm`` = left, middle) and return its right end (design px)."""
        if not text:
            return xy[0]
        px = max(4, round(size * self.k))
        mask, left, top = text_mask(text, style, px, anchor)
        x, y = self._xy(*xy)
        self.image.paste(rgb(fill), (x + left, y + top), mask)
        return xy[0] + (left + mask.width) / self.k

    def width(self, text: str, size: float, style: str = "regular") -> float:
        """Width of ``text`` in design px."""
        return text_width(text, style, max(4, round(size * self.k))) / self.k

    def paste(self, image: Image.Image, centre: tuple[float, float]) -> None:
        """Paste an RGBA ``image`` centred on ``centre`` (design px)."""
        x = round((centre[0] - self.ox) * self.k - image.width / 2)
        y = round((centre[1] - self.oy) * self.k - image.height / 2)
        self.image.paste(image, (x, y), image if image.mode == "RGBA" else None)

    def paste_at(self, image: Image.Image, corner: tuple[float, float]) -> None:
        """Paste an RGB ``image`` with its top-left corner at ``corner`` (design px)."""
        self.image.paste(image, self._xy(*corner))

    def rect(self, box: tuple[float, float, float, float], fill: str | None, outline: str | None = None,
             width: float = 1.0, radius: float = 0.0) -> None:
        """A rectangle (x0, y0, x1, y1 in design px), rounded if ``radius``."""
        x0, y0 = self._xy(box[0], box[1])
        x1, y1 = self._xy(box[2], box[3])
        w = max(1, round(width * self.k)) if outline else 0
        if radius > 0:
            self.draw.rounded_rectangle((x0, y0, x1, y1), radius=max(1, round(radius * self.k)), fill=fill,
                                        outline=outline, width=w)
        else:
            self.draw.rectangle((x0, y0, x1, y1), fill=fill, outline=outline, width=w)

    def line(self, points: list[tuple[float, float]], fill: str, width: float = 1.0) -> None:
        """A polyline in design px."""
        self.draw.line([((p[0] - self.ox) * self.k, (p[1] - self.oy) * self.k) for p in points], fill=fill,
                       width=max(1, round(width * self.k)))
