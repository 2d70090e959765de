"""The URL Standard's "domain to ASCII" for a domain that is not plain ASCII, from the stdlib.

The standard runs UTS #46 ToASCII (non-transitional, ``CheckBidi`` and ``CheckJoiners``
on, ``CheckHyphens``, ``UseSTD3ASCIIRules`` and ``VerifyDnsLength`` off); Node runs it with
the Ada parser's own Unicode tables. Python ships no UTS #46 mapping table, so
:func:`domain_to_ascii` derives each code point's status from Unicode 15.1's character
properties (``unicode_props``, the same on every Python whatever its ``unicodedata``) as
the table itself is derived (NFKC case folding, with the four deviation characters kept
and the default-ignorable ones dropped), decodes and re-checks ``xn--`` labels, and checks
each non-ASCII label: NFC, no leading combining mark, joiners only after a virama, and the
bidi rule (RFC 5893) on a label with right-to-left characters. Where this still differs
from Node is listed in docs/lenient-parsing.md ("Parity with the TypeScript SDK"); this
module is imported only when a URL's host needs it.
"""

from __future__ import annotations

from . import _unicode_props as unicode_props

_DEVIATIONS = frozenset("\u00df\u03c2\u200c\u200d")  # kept by non-transitional processing
_DISALLOWED_CATEGORIES = frozenset({"Cc", "Cf", "Cn", "Co", "Cs", "Zl", "Zp", "Zs"})
_IGNORED = frozenset(
    [
        *(0x00AD, 0x034F, 0x180B, 0x180C, 0x180D, 0x180F, 0x200B, 0x2060, 0x2064, 0xFEFF),
        *range(0xFE00, 0xFE10),
        *range(0x1BCA0, 0x1BCA4),
        *range(0xE0100, 0xE01F0),
    ]
)
"""Dropped by mapping: soft hyphens, zero-width spaces, variation selectors."""
_EXCEPTIONS = frozenset(
    [
        *(0x04C0, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x1806, 0x2132, 0x2183, 0x3164, 0x31EF),
        *(0xFFA0, 0xFFFC, 0xFFFD, 0x2F868, 0x2F874, 0x2F91F, 0x2F95F, 0x2F9BF),
        *range(0x10A0, 0x10C6),
        *range(0x2FF0, 0x3000),
    ]
)
"""Disallowed by the UTS #46 table though NFKC case folding would map or keep them: kept
as IDNA2003 had them (Georgian capitals, palochka), fillers, description characters."""
_FULL_STOPS = frozenset("\u3002\uff0e\uff61")  # the only code points that map to "."
_RTL = frozenset({"R", "AL", "AN"})
_RTL_ALLOWED = frozenset({"R", "AL", "AN", "EN", "ES", "CS", "ET", "ON", "BN", "NSM"})
_RTL_END = frozenset({"R", "AL", "EN", "AN"})
_VIRAMA = 9  # canonical combining class


def domain_to_ascii(domain: str) -> str | None:
    """The ASCII form of ``domain`` (``xn--`` labels, lower case), or None on failure."""
    if domain.isascii():
        mapped = domain.lower()
    else:
        unchecked = _mapped(domain)
        if unchecked is None:
            return None
        mapped = unicode_props.nfc(unchecked)
    labels: list[str] = []
    for label in mapped.split("."):
        if label.startswith("xn--"):
            if not label.isascii() or not _ace_label_ok(label[4:]):
                return None
        elif not label.isascii():
            if not _label_ok(label):
                return None
            label = "xn--" + label.encode("punycode").decode("ascii")
        labels.append(label)
    return ".".join(labels) or None


def _mapped(text: str) -> str | None:
    """UTS #46 "Map": each code point kept, dropped or replaced; None if one is disallowed."""
    out: list[str] = []
    for char in text:
        if char.isascii():
            out.append(char.lower())  # with UseSTD3ASCIIRules off every ASCII code point stays
        elif char in _DEVIATIONS:
            out.append(char)
        elif ord(char) in _IGNORED:
            continue
        elif char in _FULL_STOPS:
            out.append(".")
        elif ord(char) in _EXCEPTIONS or unicode_props.category(char) in _DISALLOWED_CATEGORIES:
            return None
        else:
            folded = unicode_props.nfkc_casefold(char)
            if "." in folded or "\u3002" in folded:
                return None  # "1." for U+2488: a mapping may not make a label separator
            out.append(folded)
    return "".join(out)


def _ace_label_ok(encoded: str) -> bool:
    """An ``xn--`` label: its Punycode decodes to a valid label that mapping and NFC keep."""
    decoded = _punycode_decode(encoded)
    return (
        decoded is not None
        and decoded != ""
        and _mapped(decoded) == decoded
        and unicode_props.nfc(decoded) == decoded
        and _label_ok(decoded)
    )


def _label_ok(label: str) -> bool:
    """UTS #46 validity of one label: no leading mark, ContextJ joiners, the bidi rule."""
    if unicode_props.category(label[0])[0] == "M":
        return False
    for index, char in enumerate(label):
        if char in "\u200c\u200d":
            # ContextJ: a joiner after a virama. A ZWNJ between joining letters is
            # allowed too, but Python has no Joining_Type to tell; refused here.
            if index == 0 or unicode_props.combining(label[index - 1]) != _VIRAMA:
                return False
    directions = [unicode_props.bidirectional(char) for char in label]
    while directions and directions[-1] == "NSM":
        directions.pop()
    if not directions:
        return False
    if _RTL.isdisjoint(directions):
        return True
    # A right-to-left label (RFC 5893, section 2): it starts R or AL, holds only what
    # such a label may, ends R, AL, EN or AN (then marks), and mixes no EN with AN.
    return (
        directions[0] in ("R", "AL")
        and _RTL_ALLOWED.issuperset(directions)
        and directions[-1] in _RTL_END
        and not ("EN" in directions and "AN" in directions)
    )


def _punycode_decode(encoded: str) -> str | None:
    """RFC 3492 decoding with its 32-bit overflow checks; None where it fails."""
    base, tmin, tmax, skew, damp = 36, 1, 26, 38, 700
    limit = 0x7FFFFFFF
    delimiter = encoded.rfind("-")
    output: list[str] = list(encoded[:delimiter]) if delimiter > 0 else []
    rest = encoded[delimiter + 1 :] if delimiter >= 0 else encoded
    n, i, bias, pointer = 0x80, 0, 72, 0
    while pointer < len(rest):
        old_i, weight, k = i, 1, base
        while True:
            if pointer == len(rest):
                return None
            char = rest[pointer]
            pointer += 1
            if "a" <= char <= "z":
                digit = ord(char) - 0x61
            elif "0" <= char <= "9":
                digit = ord(char) - 0x16
            else:
                return None
            if digit > (limit - i) // weight:
                return None
            i += digit * weight
            threshold = tmin if k <= bias else tmax if k >= bias + tmax else k - bias
            if digit < threshold:
                break
            if weight > limit // (base - threshold):
                return None
            weight *= base - threshold
            k += base
        count = len(output) + 1
        delta = i - old_i
        delta = delta // damp if old_i == 0 else delta // 2
        delta += delta // count
        k = 0
        while delta > ((base - tmin) * tmax) // 2:
            delta //= base - tmin
            k += base
        bias = k + ((base - tmin + 1) * delta) // (delta + skew)
        if i // count > limit - n:
            return None
        n += i // count
        i %= count
        if n > 0x10FFFF:
            return None
        output.insert(i, chr(n))
        i += 1
    return "".join(output)
