"""Argument types shared by the package's commands (``argparse`` ``type=`` functions): each turns
one command-line word into a value or raises ``argparse.ArgumentTypeError`` with one line that
argparse prints after the option's name."""

from __future__ import annotations

import argparse


def _number(text: str, kind: type, what: str) -> float:
    """``text`` as ``kind`` (int or float); ``ArgumentTypeError`` naming it when it is not one."""
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None


def _bounded(text: str, ok: bool, bound: str) -> None:
    if not ok:
        raise argparse.ArgumentTypeError(f"{text!r} must {bound}")


def positive_int(text: str) -> int:
    """An integer >= 1."""
    value = int(_number(text, int, "an integer"))
    _bounded(text, value >= 1, "be >= 1")
    return value


def non_negative_int(text: str) -> int:
    """An integer >= 0."""
    value = int(_number(text, int, "an integer"))
    _bounded(text, value >= 0, "be >= 0")
    return value


def positive_float(text: str) -> float:
    """A number > 0."""
    value = float(_number(text, float, "a number"))
    _bounded(text, value > 0, "be > 0")
    return value


def fraction(text: str) -> float:
    """A number in [0, 1]."""
    value = float(_number(text, float, "a number"))
    _bounded(text, 0.0 <= value <= 1.0, "lie in [0, 1]")
    return value


def int_list(text: str) -> list[int]:
    """A comma list of integers (``2,4``) or an inclusive range (``2-5``)."""
    try:
        values = [int(t) for t in text.replace("-", ",").split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of integers") from None
    if "-" in text:  # a range: 2-5
        if len(values) != 2 or values[0] > values[1]:
            raise argparse.ArgumentTypeError(f"{text!r} is not a range like 2-5")
        values = list(range(values[0], values[1] + 1))
    if not values:
        raise argparse.ArgumentTypeError("expected at least one integer")
    return values


def layer_widths(text: str) -> list[int]:
    """A network's hidden layer widths as a comma list (``128`` or ``256,128``), each >= 1."""
    try:
        widths = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of widths") from None
    if not widths or min(widths) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give positive layer widths, e.g. 128 or 256,128")
    return widths
