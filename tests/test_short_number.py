"""Huge integers in error messages: :func:`concordia_env.validation.short_number` keeps the first
digits and the digit count, fast, even past the 4300 digits ``str`` refuses."""

from __future__ import annotations

import json

import pytest

from concordia_env import new_game
from concordia_env.validation import SHORT_DIGITS, short_number, state_from_document


@pytest.mark.parametrize("value, text", [
    (0, "0"),
    (-7, "-7"),
    (2**63, "9223372036854775808"),
    (10**SHORT_DIGITS - 1, "9" * SHORT_DIGITS),  # 30 digits: in full
    (10**SHORT_DIGITS, "100000000000… (31 digits)"),
    (-(123456789012345 * 10**40 + 1), "-123456789012… (55 digits)"),
    (10**4300, "100000000000… (4301 digits)"),  # past what str() of an int accepts
    (10**4301 - 1, "999999999999… (4301 digits)"),
], ids=lambda v: v if isinstance(v, str) else "")  # pytest's own ids would str() the huge ints
def test_short_number(value, text):
    assert short_number(value) == text


def test_short_number_writes_absurd_sizes_without_str():
    # str() refuses integers past 4,300 digits: an answer at all shows it is not used
    assert short_number(-(2**3_000_000)) == "-a 3000001-bit integer (about 903091 digits)"
    assert short_number(7 * 10**200_000).endswith("… (200001 digits)")


def test_a_state_document_with_a_huge_integer_names_it_short():
    doc = json.loads(new_game("italia", 2, seed=0).to_json())
    doc["coins"][0] = 10**4400 + 5  # json itself cannot read such a number: a document built in Python
    doc["version"] = -(10**40)
    with pytest.raises(ValueError) as err:
        state_from_document(doc)
    message = str(err.value)
    assert "field 'coins'[0] = 100000000000… (4401 digits) does not fit a 32-bit int" in message
    assert "'version' must be 1, got -100000000000… (41 digits)" in message
    assert len(message) < 300

