"""Huge numbers shortened for messages: an error line quoting a 4,000-digit ``--seed`` or a
hostile file's integer stays one readable line, and costs little to write.

Kept apart from :mod:`concordia_env.validation` (which re-exports it) because it imports nothing
of the package: the command line uses it before it loads, or compiles, any kernel."""

from __future__ import annotations

import re

#: integers with more digits than this are shortened in messages (:func:`short_number`)
SHORT_DIGITS = 30
_LEAD_DIGITS = 12  # the leading digits a shortened integer keeps
_EXACT_BITS = 1_000_000  # up to about 300,000 digits the digit count is exact; past that, estimated
_LOG10_2 = 0.30102999566398120


def short_number(value: int, max_digits: int = SHORT_DIGITS) -> str:
    """``value`` as text for an error message: in full up to ``max_digits`` digits, else its first
    digits and its digit count, e.g. ``123456789012… (4301 digits)``.

    ``str`` of a huge integer is both long and slow, and past 4300 digits Python refuses it
    (``ValueError``), so the digits are found without it: the count from the bit length, checked
    against a power of ten, and the leading digits by one division with a one-word quotient."""
    value = int(value)
    n = abs(value)
    if n < 10**max_digits:
        return str(value)
    sign = "-" if value < 0 else ""
    bits = n.bit_length()
    if bits > _EXACT_BITS:  # even the power of ten would cost seconds: the count from the bits alone
        return f"{sign}a {bits}-bit integer (about {int(bits * _LOG10_2) + 1} digits)"
    digits = int((bits - 1) * _LOG10_2) + 1  # the count for the smallest number of that bit length
    while n >= 10**digits:
        digits += 1
    lead = n // 10**(digits - _LEAD_DIGITS)
    return f"{sign}{lead}… ({digits} digits)"


_LONG_NUMBER = re.compile(rf"\d{{{SHORT_DIGITS + 1},}}")


def cut_numbers(text: str) -> str:
    """``text`` with every run of more than :data:`SHORT_DIGITS` digits written as
    :func:`short_number` writes it, so an error line that quotes a huge number (``--seed`` with
    4,000 digits) stays one readable line."""
    return _LONG_NUMBER.sub(lambda m: short_number(int(m.group())) if len(m.group()) <= 4300 else
                            f"{m.group()[:_LEAD_DIGITS]}… ({len(m.group())} digits)", text)
