"""RFC 8785's own examples, written out as the RFC gives them, and a2a-sdk's canonicalizer
(a2a.utils._jcs, which the Python verifier runs) as an oracle on generated values."""

from __future__ import annotations

import json
import math
import struct
from typing import Any

import pytest
from a2a.utils._jcs import CanonicalizationError, canonicalize
from hypothesis import given, settings
from hypothesis import strategies as st

from n8n_a2a.protocol.errors import NotCanonicalizable
from n8n_a2a.protocol.jcs import canonical

# RFC 8785 §3.2.2's input (as a JSON text: its numbers are what a parser makes of them).
RFC_INPUT = r"""{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}"""
RFC_OUTPUT = (
    '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
    '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
)

# §3.2.3: keys ordered by their UTF-16 code units.
RFC_SORTING_INPUT = r"""{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}"""
RFC_SORTED_KEYS = ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]

# Appendix B: IEEE 754 doubles (hex) and their canonical text.
RFC_NUMBERS = {
    "0000000000000000": "0",
    "8000000000000000": "0",
    "0000000000000001": "5e-324",
    "8000000000000001": "-5e-324",
    "7fefffffffffffff": "1.7976931348623157e+308",
    "ffefffffffffffff": "-1.7976931348623157e+308",
    "4340000000000000": "9007199254740992",
    "c340000000000000": "-9007199254740992",
    "4430000000000000": "295147905179352830000",
    "44b52d02c7e14af5": "9.999999999999997e+22",
    "44b52d02c7e14af6": "1e+23",
    "44b52d02c7e14af7": "1.0000000000000001e+23",
    "444b1ae4d6e2ef4e": "999999999999999700000",
    "444b1ae4d6e2ef4f": "999999999999999900000",
    "444b1ae4d6e2ef50": "1e+21",
    "3eb0c6f7a0b5ed8c": "9.999999999999997e-7",
    "3eb0c6f7a0b5ed8d": "0.000001",
    "41b3de4355555553": "333333333.3333332",
    "41b3de4355555554": "333333333.33333325",
    "41b3de4355555555": "333333333.3333333",
    "41b3de4355555556": "333333333.3333334",
    "41b3de4355555557": "333333333.33333343",
    "becbf647612f3696": "-0.0000033333333333333333",
    "43143ff3c1cb0959": "1424953923781206.2",
}
RFC_NOT_NUMBERS = ["7fffffffffffffff", "7ff0000000000000"]  # NaN, Infinity


def double(hex_bits: str) -> float:
    value: float = struct.unpack(">d", bytes.fromhex(hex_bits))[0]
    return value


def test_rfc_8785_example() -> None:
    assert canonical(json.loads(RFC_INPUT)) == RFC_OUTPUT.encode()


def test_rfc_8785_sorting_example() -> None:
    written = canonical(json.loads(RFC_SORTING_INPUT)).decode()
    assert list(json.loads(written)) == RFC_SORTED_KEYS
    # Code point order would put the emoji (U+1F600) after U+FB33.
    assert written.index("\U0001f600") < written.index("\ufb33")


@pytest.mark.parametrize(("bits", "text"), RFC_NUMBERS.items())
def test_rfc_8785_numbers(bits: str, text: str) -> None:
    assert canonical(double(bits)) == text.encode()


@pytest.mark.parametrize("bits", RFC_NOT_NUMBERS)
def test_nan_and_infinity_have_no_canonical_form(bits: str) -> None:
    with pytest.raises(NotCanonicalizable):
        canonical([double(bits)])


@pytest.mark.parametrize(
    "value",
    [2**53, -(2**53), "\ud800", {"\udfff": 1}, {1: "a"}, {"a": object()}, b"bytes"],
    ids=["big int", "big negative int", "lone surrogate", "surrogate key", "int key", "object",
         "bytes"],
)  # fmt: skip
def test_what_is_not_json_is_refused(value: Any) -> None:
    with pytest.raises(NotCanonicalizable):
        canonical(value)
    with pytest.raises(CanonicalizationError):  # the oracle agrees
        canonicalize(value)


def test_non_ascii_is_written_as_it_is_and_controls_escaped() -> None:
    assert canonical("é 日本 🎉\u2028\x7f") == '"é 日本 🎉\u2028\x7f"'.encode()
    assert canonical("\x00\x08\x09\x0a\x0c\x0d\x1f") == b'"\\u0000\\b\\t\\n\\f\\r\\u001f"'


SAFE_INTEGERS = st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
SCALARS = (
    st.none()
    | st.booleans()
    | SAFE_INTEGERS
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
# Keys with astral and high-BMP characters, where code point and UTF-16 order part ways.
KEYS = st.text() | st.sampled_from(["\U0001f600", "\ufb33", "\uff01", "a", "\u20ac", ""])
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(KEYS, inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(JSON_VALUES)
def test_agrees_with_a2a_sdk_on_generated_values(value: Any) -> None:
    assert canonical(value) == canonicalize(value).encode()


@settings(max_examples=1000, deadline=None)
@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_agrees_with_a2a_sdk_on_every_kind_of_double(bits: int) -> None:
    value = double(f"{bits:016x}")
    if math.isfinite(value):
        assert canonical(value) == canonicalize(value).encode()
