"""Would the WHATWG URL parser accept this string as an absolute URL? (``URL.canParse``)

The schemas' ``format: uri`` strings are checked by the TypeScript SDK with zod's
``z.url()``, which asks the WHATWG URL parser (``URL.canParse``); to accept and refuse
what it does, the generated models ask :func:`can_parse`. ``urllib.parse`` refuses almost
nothing and a scheme regex would disagree both ways (``http:x`` parses, ``http://a b``
does not), so this follows the URL Standard's basic URL parser (no base URL) through
every step that can fail: the scheme, special and non-special schemes, the authority and
its credentials, host parsing (forbidden host and domain code points, IPv4 numbers and
the "ends in a number" rule, IPv6 with compression and embedded IPv4, percent-decoded
domains, opaque hosts), the port, and ``file:`` hosts. The path, query and fragment
states never fail, so they are not walked. A domain that is not plain ASCII (or has an
``xn--`` label) goes to :mod:`acp_runtime._whatwg_idna`, imported only then.
"""

from __future__ import annotations

import re

_SPECIAL = frozenset({"http", "https", "ws", "wss", "ftp"})
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_C0_OR_SPACE = "".join(map(chr, range(0x21)))
_FORBIDDEN_HOST = frozenset("\x00\t\n\r #/:<>?@[\\]^|")
_FORBIDDEN_DOMAIN = _FORBIDDEN_HOST | frozenset(map(chr, range(0x20))) | {"%", "\x7f"}
_SIMPLE_DOMAIN = re.compile(r"[a-z0-9_\-.~!$&'()*+,;=]+")
"""An ASCII domain with no upper case, no ``%`` and nothing forbidden: kept as it is."""
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_OCTAL_DIGITS = frozenset("01234567")
_PERCENT_BYTE = re.compile(rb"%([0-9A-Fa-f]{2})")


def without_tab_or_newline(text: str) -> str:
    """``text`` without its ASCII tabs and newlines, which the URL parser removes first."""
    if "\t" in text or "\n" in text or "\r" in text:
        return text.replace("\t", "").replace("\n", "").replace("\r", "")
    return text


def can_parse(url: str) -> bool:
    """``URL.canParse(url)``: the basic URL parser, without a base, does not fail."""
    url = without_tab_or_newline(url.strip(_C0_OR_SPACE))
    scheme = _SCHEME.match(url)
    if scheme is None:
        return False  # the "no scheme" state fails without a base URL
    name = scheme.group().lower()[:-1]
    rest = url[scheme.end() :]
    if name == "file":
        return _file_rest_ok(rest)
    if name in _SPECIAL:
        return _authority_ok(rest.lstrip("/\\"), special=True)
    if rest.startswith("//"):
        return _authority_ok(rest[2:], special=False)
    return True  # a path, or an opaque path: neither can fail


def _authority_ok(rest: str, *, special: bool) -> bool:
    """The authority, host and port states, on what follows the scheme's slashes."""
    end = len(rest)
    for stop in "/?#\\" if special else "/?#":
        found = rest.find(stop, 0, end)
        if found != -1:
            end = found
    authority = rest[:end]
    at = authority.rfind("@")
    if at != -1:
        authority = authority[at + 1 :]
        if not authority:
            return False  # credentials and no host
    colon = _port_colon(authority)
    host = authority if colon == -1 else authority[:colon]
    if not host:
        # "http://:80" has no host; a non-special URL may have an empty one ("foo://")
        return special is False and colon == -1
    if colon != -1:
        port = authority[colon + 1 :]
        if port and (not _digits(port) or int(port) > 65535):
            return False
    return _host_ok(host, opaque=not special)


def _port_colon(authority: str) -> int:
    """Where the host state meets a ``:`` outside ``[...]``, or -1."""
    if "[" not in authority:
        return authority.find(":")
    inside = False
    for index, char in enumerate(authority):
        if char == "[":
            inside = True
        elif char == "]":
            inside = False
        elif char == ":" and not inside:
            return index
    return -1


def _file_rest_ok(rest: str) -> bool:
    """The file, file slash and file host states: only a host after ``//`` can fail."""
    if rest[:1] not in ("/", "\\") or rest[1:2] not in ("/", "\\"):
        return True  # a path
    rest = rest[2:]
    end = len(rest)
    for stop in "/\\?#":
        found = rest.find(stop, 0, end)
        if found != -1:
            end = found
    host = rest[:end]
    if not host or (len(host) == 2 and host[0].isascii() and host[0].isalpha() and host[1] in ":|"):
        return True  # no host, or a Windows drive letter the path state takes
    return _host_ok(host, opaque=False)


def _host_ok(host: str, *, opaque: bool) -> bool:
    """The host parser: IPv6 in brackets, an opaque host, or a domain (maybe IPv4)."""
    if host[0] == "[":
        return host[-1] == "]" and _ipv6_ok(host[1:-1])
    if opaque:
        return not any(char in _FORBIDDEN_HOST for char in host)
    if _SIMPLE_DOMAIN.fullmatch(host) and "xn--" not in host:
        domain = host  # domain to ASCII lowercases an ASCII domain, nothing more
    else:
        if "%" in host:
            raw = _PERCENT_BYTE.sub(
                lambda m: bytes.fromhex(m.group(1).decode()),
                host.encode("utf-8", "surrogatepass"),
            )
            host = raw.decode("utf-8", "replace")  # UTF-8 decode without BOM
        if host.isascii() and "xn--" not in host.lower():
            domain = host.lower()
        else:
            from ._whatwg_idna import domain_to_ascii  # non-ASCII hosts only (cold start)

            converted = domain_to_ascii(host)
            if converted is None:
                return False
            domain = converted
        if not domain or any(char in _FORBIDDEN_DOMAIN for char in domain):
            return False
    return not _ends_in_a_number(domain) or _ipv4_ok(domain)


def _digits(text: str) -> bool:
    """One or more ASCII digits (``str.isdigit`` alone takes any script's)."""
    return text.isascii() and text.isdigit()


def _ipv4_number(part: str) -> int | None:
    """The IPv4 number parser: decimal, ``0x`` hex or ``0`` octal; None if it is none."""
    if not part:
        return None
    if part[:2] in ("0x", "0X"):
        digits, base, allowed = part[2:], 16, _HEX_DIGITS
    elif len(part) > 1 and part[0] == "0":
        digits, base, allowed = part[1:], 8, _OCTAL_DIGITS
    else:
        return int(part) if _digits(part) else None
    if not allowed.issuperset(digits):
        return None
    return int(digits, base) if digits else 0


def _ends_in_a_number(domain: str) -> bool:
    parts = domain.split(".")
    if parts[-1] == "":
        if len(parts) == 1:
            return False
        parts.pop()
    last = parts[-1]
    return _digits(last) or _ipv4_number(last) is not None


def _ipv4_ok(domain: str) -> bool:
    """The IPv4 parser: at most four numbers, each but the last at most 255, the last
    small enough for the bytes left."""
    parts = domain.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    if len(parts) > 4:
        return False
    numbers: list[int] = []
    for part in parts:
        number = _ipv4_number(part)
        if number is None:
            return False
        numbers.append(number)
    *leading, last = numbers
    return all(n <= 255 for n in leading) and last < 256 ** (5 - len(numbers))


def _ipv6_ok(address: str) -> bool:
    """The IPv6 parser: eight 16-bit pieces, one ``::`` compression, an IPv4 tail."""
    length = len(address)
    pointer = piece = 0
    compress: int | None = None
    if address[:1] == ":":
        if address[1:2] != ":":
            return False
        pointer, piece, compress = 2, 1, 1
    while pointer < length:
        if piece == 8:
            return False
        if address[pointer] == ":":
            if compress is not None:
                return False
            pointer += 1
            piece += 1
            compress = piece
            continue
        start = pointer
        while pointer < length and pointer - start < 4 and address[pointer] in _HEX_DIGITS:
            pointer += 1
        if pointer < length and address[pointer] == ".":
            if pointer == start or piece > 6:
                return False
            return _ipv6_ipv4_tail_ok(address[start:], piece, compress)
        if pointer < length:
            if address[pointer] != ":":
                return False
            pointer += 1
            if pointer == length:
                return False
        piece += 1
    return compress is not None or piece == 8


def _ipv6_ipv4_tail_ok(tail: str, piece: int, compress: int | None) -> bool:
    """An IPv6 address's dotted IPv4 tail: four decimal numbers, no leading zero, <= 255."""
    numbers = tail.split(".")
    if len(numbers) != 4:
        return False
    for number in numbers:
        if not _digits(number) or (len(number) > 1 and number[0] == "0"):
            return False
        if int(number) > 255:
            return False
    return compress is not None or piece + 2 == 8
