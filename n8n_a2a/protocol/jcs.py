"""RFC 8785, the JSON Canonicalization Scheme: the bytes a signed Agent Card's JWS covers.

json.dumps is not it: it orders keys by code point, not by UTF-16 code unit (they differ
once a key holds a character above U+FFFF), and writes floats as Python's repr, not as
ECMAScript's Number.prototype.toString (1e-06 against 0.000001, 1e+21 against 1e21).
Strings are as json.dumps writes them with ensure_ascii off: only '"', '\\' and the C0
controls escaped, the five with a short form in it, everything else as it is (§3.2.2.2).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from decimal import Decimal

from .errors import NotCanonicalizable

#: Integers past 2**53 have no exact IEEE 754 double: no interoperable JSON number (§3.2.2.3).
MAX_SAFE_INTEGER = 2**53 - 1
_STRING = json.JSONEncoder(ensure_ascii=False)


def canonical(value: object) -> bytes:
    """The canonical form of `value` (JSON as json.loads gives it), in UTF-8."""
    out: list[str] = []
    _write(value, out)
    try:
        return "".join(out).encode()
    except UnicodeEncodeError:
        raise NotCanonicalizable("a string holds a lone surrogate") from None


def _write(value: object, out: list[str]) -> None:
    if isinstance(value, Mapping):
        if not all(isinstance(key, str) for key in value):
            raise NotCanonicalizable("an object key is not a string")
        out.append("{")
        for index, key in enumerate(sorted(value, key=_utf16)):
            out.append("," if index else "")
            out.append(_STRING.encode(key) + ":")
            _write(value[key], out)
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        for index, item in enumerate(value):
            out.append("," if index else "")
            _write(item, out)
        out.append("]")
    else:
        out.append(_scalar(value))


def _utf16(key: str) -> bytes:
    # Big-endian UTF-16 compared bytewise is the code-unit order §3.2.3 asks for.
    try:
        return key.encode("utf-16-be")
    except UnicodeEncodeError:
        raise NotCanonicalizable("a key holds a lone surrogate") from None


def _scalar(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):  # before int: bool is one
        return "true" if value else "false"
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise NotCanonicalizable(f"{value} is past the integers a double holds exactly")
        return str(value)
    if isinstance(value, float):
        return number(value)
    if isinstance(value, str):
        return _STRING.encode(value)
    raise NotCanonicalizable(f"a {type(value).__name__} is not JSON")


def number(value: float) -> str:
    """ECMAScript's Number.prototype.toString of `value` (ECMA-262 Number::toString): the
    shortest digits that read back as `value` (Python's repr finds the same ones), written
    out in full from 1e-6 up to 1e21, with an exponent outside that."""
    if not math.isfinite(value):
        raise NotCanonicalizable(f"{value} is not a JSON number")
    if value == 0:
        return "0"  # -0 included
    if value < 0:
        return "-" + number(-value)
    shortest = Decimal(repr(value)).normalize().as_tuple()
    digits = "".join(map(str, shortest.digits))
    # value = 0.DIGITS x 10**n, in ECMA-262's terms (k digits).
    k, n = len(digits), len(digits) + int(shortest.exponent)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + digits
    point = "." + digits[1:] if k > 1 else ""
    return f"{digits[0]}{point}e{'+' if n > 0 else '-'}{abs(n - 1)}"
