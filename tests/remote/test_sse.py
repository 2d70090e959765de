"""The SSE parser: the rules the TypeScript SDK's parser follows, and the same events
whatever the network chunking (split lines, split CRLF pairs, split UTF-8 characters)."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from acp_runtime.remote._sse import PREFIX_BYTES, OversizedEvent, SseItem, SseParser


def parse(stream: bytes, cuts: list[int] | None = None, limit: int = 1 << 20) -> list[SseItem]:
    parser = SseParser(limit)
    bounds = [0, *sorted(cuts or []), len(stream)]
    out: list[SseItem] = []
    for start, stop in itertools.pairwise(bounds):
        out += parser.feed(stream[start:stop])
    return out + parser.finish()


def test_data_lines_join_with_lf_and_a_blank_line_dispatches() -> None:
    assert parse(b"data: a\ndata:b\ndata:  c\n\n") == [b"a\nb\n c"]


def test_every_line_end_counts_and_a_crlf_is_one() -> None:
    assert parse(b"data: 1\r\rdata: 2\r\n\r\ndata: 3\n\n") == [b"1", b"2", b"3"]
    # CR at a chunk's end, its LF opening the next chunk (after empty chunks): one line end
    assert parse(b"data: 1\r\n\r\n", cuts=[8, 8, 8]) == [b"1"]


def test_comments_and_other_fields_are_ignored() -> None:
    stream = b":\n\n: keep-alive\nevent: x\nid: 7\nretry: 10\ndatum: no\ndata: yes\n\n"
    assert parse(stream) == [b"yes"]


def test_a_bom_is_stripped_at_the_start_of_a_line() -> None:
    assert parse(b"\xef\xbb\xbfdata: a\n\xef\xbb\xbf\n") == [b"a"]


def test_an_event_without_data_is_not_dispatched_and_empty_data_is() -> None:
    assert parse(b"event: x\n\n\n\n") == []
    assert parse(b"data\n\ndata:\n\n") == [b""]  # "data" alone is another field


def test_an_unterminated_last_event_is_dispatched_at_end_of_input() -> None:
    assert parse(b"data: a\n\ndata: b") == [b"a", b"b"]


def test_a_split_multibyte_character_reaches_the_data_intact() -> None:
    stream = 'data: {"t":"h\u00e9llo \U0001f600"}\n\n'.encode()
    for cut in range(len(stream)):
        assert parse(stream, [cut]) == ['{"t":"h\u00e9llo \U0001f600"}'.encode()]


def test_an_event_over_the_limit_is_dropped_and_the_next_one_parses() -> None:
    big = b"x" * 100
    stream = b"data: " + big + b"\n\ndata: ok\n\n"
    assert parse(stream, limit=99) == [OversizedEvent(99, big), b"ok"]
    assert parse(stream, limit=100) == [big, b"ok"]
    # several data lines together over the limit: the joining LF counts
    assert parse(b"data: " + big[:50] + b"\ndata: " + big[:49] + b"\n\n", limit=99) == [
        OversizedEvent(99, big[:50] + b"\n" + big[:49])
    ]


def test_an_oversized_line_is_never_buffered_past_the_limit() -> None:
    parser = SseParser(1000)
    assert parser.feed(b"data: " + b"y" * 600) == []
    for _ in range(1000):  # 10 MB of one line, in pieces
        assert parser.feed(b"y" * 10_000) == []
        assert len(parser._line) <= 1000 + 9  # pyright: ignore[reportPrivateUsage]
    assert parser.feed(b"\n\ndata: after\n\n") == [
        OversizedEvent(1000, b"y" * PREFIX_BYTES),
        b"after",
    ]


def test_an_oversized_comment_line_is_skipped_without_failing_the_event() -> None:
    assert parse(b":" + b"z" * 500 + b"\ndata: ok\n\n", limit=100) == [b"ok"]


# -- property: any stream, any chunking ---------------------------------------------------

_value = st.binary(max_size=40).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b""))
_end = st.sampled_from([b"\n", b"\r\n", b"\r"])
_noise = st.sampled_from([b":", b": keep-alive", b"event: e", b"id: 1", b"retry: 5", b"other"])


@st.composite
def event_streams(draw: st.DrawFn) -> tuple[bytes, list[bytes]]:
    """A stream of events with random line ends, comments, BOMs and ignored fields, and
    the data each event must yield."""
    stream = bytearray()
    expected: list[bytes] = []

    def end() -> bytes:  # a bare CR then an LF would be one line end: not two
        drawn = draw(_end)
        return b"\r\n" if stream.endswith(b"\r") and drawn == b"\n" else drawn

    for _ in range(draw(st.integers(0, 6))):
        values = draw(st.lists(_value, min_size=1, max_size=4))
        for value in values:
            if draw(st.booleans()):
                stream += draw(_noise)
                stream += end()
            bom = b"\xef\xbb\xbf" if draw(st.integers(0, 9)) == 0 else b""
            space = b" " if value.startswith(b" ") or draw(st.booleans()) else b""
            stream += bom + b"data:" + space + value
            stream += end()
        stream += end()
        expected.append(b"\n".join(values))
    return bytes(stream), expected


@given(event_streams(), st.lists(st.integers(0, 1000), max_size=12))
def test_any_split_parses_as_the_whole_stream(
    case: tuple[bytes, list[bytes]], cuts: list[int]
) -> None:
    stream, expected = case
    cuts = [min(cut, len(stream)) for cut in cuts]
    assert parse(stream) == expected
    assert parse(stream, cuts) == expected
    assert parse(stream, list(range(len(stream)))) == expected  # one byte at a time


@given(event_streams(), st.lists(st.integers(0, 1000), max_size=8), st.integers(1, 60))
def test_the_limit_applies_the_same_whatever_the_split(
    case: tuple[bytes, list[bytes]], cuts: list[int], limit: int
) -> None:
    stream, expected = case
    cuts = [min(cut, len(stream)) for cut in cuts]
    want = [
        data if len(data) <= limit else OversizedEvent(limit, data[:PREFIX_BYTES])
        for data in expected
    ]
    assert parse(stream, limit=limit) == want
    assert parse(stream, cuts, limit=limit) == want


def test_the_usual_events_are_read_whole_or_split_anywhere() -> None:
    """``data: <json>`` and a blank line, as servers write them (read without the line
    buffer when whole), among a keep-alive comment and a two-line event."""
    events = [b'{"n":1}', b'{"t":"\xc3\xa9"}', b"", b'{"n":2}']
    stream = b"".join(b"data: " + event + b"\n\n" for event in events[:2])
    stream += b":\n\ndata: \n\ndata: {\ndata: }\n\n" + b"data: " + events[3] + b"\n\n"
    expected = [*events[:3], b"{\n}", events[3]]
    assert parse(stream) == expected
    for cut in range(len(stream) + 1):
        assert parse(stream, [cut]) == expected
