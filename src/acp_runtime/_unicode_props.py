"""Unicode 15.1 character properties on every supported Python, for the URL check.

``unicodedata`` is the interpreter's own Unicode version (13.0 on Python 3.10 up to 15.1
on 3.13), so the URL check (``whatwg_idna``) would accept a host on one Python and refuse
it on another. The code points whose properties changed since 13.0 are looked up first in
a table generated from Unicode 15.1 (``_unicode_15_1``, written by
``codegen/unicode_table.py``); the rest come from ``unicodedata``, whose data for them is
the same on every supported version. Code points unassigned in 15.1 stay unassigned on
an interpreter with newer data.
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_right
from functools import lru_cache

from ._unicode_15_1 import CHANGED, UNASSIGNED, VERSION

_FIRSTS = [first for first, *_ in CHANGED]
_FIRST_CHANGED = _FIRSTS[0]
_UNASSIGNED_FIRSTS = [first for first, _ in UNASSIGNED]
_NEWER_DATA = tuple(map(int, unicodedata.unidata_version.split("."))) > tuple(
    map(int, VERSION.split("."))
)
_LATE_MARKS = frozenset(
    chr(cp) for first, last, _, _, ccc, _ in CHANGED if ccc for cp in range(first, last + 1)
)
"""Combining marks an older ``unicodedata`` takes for starters: its NFC orders them wrong."""

_Row = tuple[str, str, int, str]


@lru_cache(maxsize=4096)  # a host repeats its script's few code points
def _row(char: str) -> _Row | None:
    """The table's category, bidi class, combining class and mapping of ``char``, if any."""
    cp = ord(char)
    if cp < _FIRST_CHANGED and not _NEWER_DATA:  # Latin, Greek, Cyrillic, Hebrew: no search
        return None
    index = bisect_right(_FIRSTS, cp) - 1
    if index >= 0:
        _, last, category, bidi, ccc, mapping = CHANGED[index]
        if cp <= last:
            return category, bidi, ccc, mapping or char
    if _NEWER_DATA:
        index = bisect_right(_UNASSIGNED_FIRSTS, cp) - 1
        if index >= 0 and cp <= UNASSIGNED[index][1]:
            return "Cn", "", 0, char
    return None


def category(char: str) -> str:
    row = _row(char)
    return unicodedata.category(char) if row is None else row[0]


def bidirectional(char: str) -> str:
    row = _row(char)
    return unicodedata.bidirectional(char) if row is None else row[1]


def combining(char: str) -> int:
    row = _row(char)
    return unicodedata.combining(char) if row is None else row[2]


def nfkc_casefold(char: str) -> str:
    """NFKC, case folding, NFKC again: how UTS #46 derives a code point's mapping."""
    row = _row(char)
    if row is None:
        return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", char).casefold())
    return row[3]


def nfc(text: str) -> str:
    """NFC with 15.1's combining classes. No code point added since 13.0 decomposes or
    composes, so only the order of marks (and what they block) can differ: text with
    such a mark is reordered and composed here, pair by pair through ``unicodedata``."""
    if _LATE_MARKS.isdisjoint(text):
        return unicodedata.normalize("NFC", text)
    chars = list(unicodedata.normalize("NFD", text))
    _order_marks(chars)
    out: list[str] = []
    starter = -1  # where the last starter is in ``out``
    last_class = 0
    for char in chars:
        ccc = combining(char)
        adjacent = starter == len(out) - 1
        if starter >= 0 and (adjacent or 0 < last_class < ccc):
            pair = unicodedata.normalize("NFC", out[starter] + char)
            if len(pair) == 1:
                out[starter] = pair
                continue
        if ccc == 0:
            starter = len(out)
        last_class = ccc
        out.append(char)
    return "".join(out)


def _order_marks(chars: list[str]) -> None:
    """Canonical ordering: each run of marks sorted, stably, by combining class."""
    start = 0
    while start < len(chars):
        if combining(chars[start]) == 0:
            start += 1
            continue
        end = start
        while end < len(chars) and combining(chars[end]) != 0:
            end += 1
        chars[start:end] = sorted(chars[start:end], key=combining)
        start = end
