"""Lenient parsing, differentially: the TypeScript SDK 2.4.0's zod schemas (in Node) and our
models must agree on accept/reject for every case, and where both accept, on every value
the TypeScript SDK keeps.

Cases: for every def that has a generated model of its name, its synthesized instances
(``tests/corpus/synth.py``, valid by ``jsonschema``), then mutations of each top-level
property: a value of the wrong type, ``null``, and for arrays an invalid item at the front;
and the params and results of the TypeScript SDK transcripts (``tests/corpus/transcripts``)
with the same mutations at every depth. Properties the schema marks ``x-deserialize-*``
are salvaged; the others must be refused by both.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from acp_runtime.codegen_support import AcpModel
from tests.codegen.schemas import IDS, PACKAGES, Package
from tests.codegen.test_corpus_roundtrip import _typed_defs, _validator
from tests.corpus.messages import CORPUS, read_lines, route
from tests.corpus.synth import Synth

from .node_peers import PEERS_DIR, JsonLinesNode, ensure_node_modules, node_executable

ZOD_PARSE = PEERS_DIR / "zod_parse.mjs"
TRANSCRIPTS = CORPUS / "transcripts"

Case = tuple[str, str, Any]  # (def, label, value)

KNOWN_DIFFERENCES: dict[tuple[str, str], str] = {}
"""(def, property) -> why the two SDKs differ there on purpose; mutations of it are skipped.
Empty: ``SessionConfigSelectGroup.options`` (required, default-on-error, minItems 1) was the
one entry until the generator dropped ``minItems`` where a default-on-error fallback needs
``[]``, as the TypeScript SDK and serde fall back."""


def _wrong(value: Any) -> Any:
    return 12345 if isinstance(value, str) else "not-this-type"


def _mutations(instance: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for key, value in instance.items():
        yield f"{key}=wrong", {**instance, key: _wrong(value)}
        yield f"{key}=null", {**instance, key: None}
        if isinstance(value, list) and value:
            yield f"{key}[0]=wrong", {**instance, key: [_wrong(value[0]), *value]}


URI_KEYS = frozenset({"uri", "src", "url", "baseUrl"})
"""Names of the schemas' ``format: uri`` properties (and of plain strings in older defs)."""

URI_VALUES: tuple[str, ...] = (
    "teleport", "", " ", "https://example.com/a.png", " https://example.com/a.png ",
    "\thttps://exa\nmple.com/a\r.png", "http://a b", "http:x", "http:", "http://[::1]:65536",
    "http://[::1]:8080/x", "file:///home/u/a.py", "file://host/x", "data:image/png;base64,AA==",
    "foo:", "//x", "/relative/path", "http://1.2.3.4.5", "http://0x7f.1", "http://999999999999",
    "https://\u4f8b\u3048.jp/", "\u3000http://a\u3000", "\ufeffhttp://a", "http://a\u2028",
    "\x00http://a", "\x0bhttp://a\x0c", "HTTP://EXAMPLE.COM", "mailto:x@y", "http://xn--a",
    "https://ex%41mple.com", "https://ex%00ample.com", "https://user@/x",
)  # fmt: skip
"""URL strings for every ``uri``-named string: zod's ``z.url()`` trims (JavaScript's
``trim``), asks the WHATWG URL parser and keeps the string without tabs and newlines.
No Latin-1 letters: Node 20's ``URL.canParse`` refuses "\u00e9" once optimized
(tests/interop/peers/url_can_parse.mjs)."""


Mutator = Callable[[dict[str, Any], str], Iterator[tuple[str, dict[str, Any]]]]
"""The labelled mutations of one object, given its path."""


def _everywhere(value: Any, mutate: Mutator, path: str = "") -> Iterator[tuple[str, Any]]:
    """``mutate``'s mutations of every object inside ``value``, each rebuilt into the whole."""
    if isinstance(value, dict):
        yield from mutate(value, path)
        for key, child in value.items():
            for label, mutated in _everywhere(child, mutate, f"{path}.{key}"):
                yield label, {**value, key: mutated}
    elif isinstance(value, list):
        for i, child in enumerate(value):
            for label, mutated in _everywhere(child, mutate, f"{path}[{i}]"):
                yield label, [*value[:i], mutated, *value[i + 1 :]]


def _uri_values(obj: dict[str, Any], path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each string under a :data:`URI_KEYS` key replaced by each of :data:`URI_VALUES`."""
    for key, child in obj.items():
        if key in URI_KEYS and isinstance(child, str):
            for i, url in enumerate(URI_VALUES):
                yield f"{path}.{key}=url{i}", {**obj, key: url}


def _labelled_mutations(obj: dict[str, Any], path: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for label, mutated in _mutations(obj):
        yield f"{path}.{label}", mutated


def _transcript_cases(pkg: Package) -> list[Case]:
    if pkg.key.endswith("unstable"):
        return []  # the transcripts are stable traffic; the stable packages parse them
    cases: list[Case] = []
    prefix = pkg.key.split("/")[0] + "_"
    for path in sorted(TRANSCRIPTS.glob(f"{prefix}*.jsonl")):
        for routed in route(read_lines(path), pkg.methods, path.name):
            model = getattr(routed.codec, "_type", None)
            if routed.kind not in ("params", "result") or not isinstance(routed.payload, dict):
                continue
            if not (isinstance(model, type) and issubclass(model, AcpModel)):
                continue
            name = model.__name__
            cases.append((name, f"{routed.where}", routed.payload))
            cases += [
                (name, f"{routed.where}:{label}", value)
                for label, value in _everywhere(routed.payload, _labelled_mutations)
            ]
    return cases


def _cases(pkg: Package) -> list[Case]:
    synth = Synth(pkg.raw_schema)
    cases: list[Case] = []
    for name in _typed_defs(pkg):
        if not (
            isinstance(cls := getattr(pkg.models, name, None), type) and issubclass(cls, AcpModel)
        ):
            continue
        validator = _validator(pkg.raw_schema, name)
        for label, instance in synth.instances(name):
            if not isinstance(instance, dict) or not validator.is_valid(instance):
                continue
            cases.append((name, label, instance))
            cases += [(name, f"{label}:{m}", value) for m, value in _mutations(instance)]
            uris = _everywhere(instance, _uri_values)
            cases += [(name, f"{label}:{m}", value) for m, value in uris]
    return cases + _transcript_cases(pkg)


def _zod(pkg: Package, cases: list[Case]) -> list[dict[str, Any]]:
    lines = "".join(
        json.dumps({"schema": pkg.key, "def": name, "value": value}) + "\n"
        for name, _label, value in cases
    )
    node = node_executable()
    assert node is not None
    done = subprocess.run(
        [node, str(ZOD_PARSE)], input=lines, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    # "\n" only: zod keeps U+2028 in a string, which JSON.stringify does not escape
    return [json.loads(line) for line in done.stdout.split("\n")[:-1]]


def _kept(ts: Any, ours: Any) -> bool:
    """Every value the TypeScript SDK kept is in ours, equal (ours may keep more)."""
    if isinstance(ts, dict):
        return isinstance(ours, dict) and all(
            k in ours and _kept(v, ours[k]) for k, v in ts.items()
        )
    if isinstance(ts, list):
        return isinstance(ours, list) and len(ts) == len(ours) and all(map(_kept, ts, ours))
    return bool(ts == ours)


@pytest.mark.parametrize("pkg", PACKAGES, ids=IDS)
def test_lenient_parsing_agrees_with_the_typescript_sdk(pkg: Package) -> None:
    if node_executable() is None:
        pytest.skip("node is not installed")
    ensure_node_modules()
    cases = _cases(pkg)
    answers = _zod(pkg, cases)
    assert len(answers) == len(cases)
    compared, disagreements = 0, []
    for (name, label, value), ts in zip(cases, answers, strict=True):
        mutated = label.rpartition(":")[2].rpartition(".")[2].partition("=")[0].partition("[")[0]
        if ts.get("missing") or (name, mutated) in KNOWN_DIFFERENCES:
            continue
        compared += 1
        try:
            parsed = getattr(pkg.models, name).model_validate_lenient(value)
        except ValueError:
            ours = None
        else:
            ours = parsed.model_dump(mode="json", by_alias=True)
        if (ours is not None) != ts["ok"]:
            verdict = "we accept" if ours is not None else "we refuse"
            disagreements.append(f"{name} {label}: {verdict}, the TS SDK does not")
        elif ours is not None and not _kept(ts["value"], ours):
            disagreements.append(
                f"{name} {label}: {json.dumps(ts['value'])[:200]} vs {json.dumps(ours)[:200]}"
            )
    assert compared > 1000
    assert disagreements == [], f"{len(disagreements)} of {compared}:\n" + "\n".join(
        disagreements[:40]
    )


# -- hypothesis: random mutations at random depths, one Node process per package ------------

BAD_VALUES = st.sampled_from(
    [
        None,
        12345,
        -1,
        1.5,
        1.0,  # an integer for JSON Schema and zod (JsonInt), not a bad value
        True,
        "1",
        "teleport",  # refused by zod's ``z.url()`` too, on a ``format: uri`` string
        "_acme.dev/unknown",
        "",
        [],
        {},
        [12345],
        {"x": 1},
    ]
)


@cache
def _zod_process() -> JsonLinesNode:
    """``zod_parse.mjs``: ``{"schema", "def", "value"}`` in, its parse out."""
    return JsonLinesNode(ZOD_PARSE)


@cache
def _instances(key: str) -> list[tuple[str, dict[str, Any]]]:
    pkg = next(p for p in PACKAGES if p.key == key)
    return [(name, value) for name, label, value in _cases(pkg) if ":" not in label]


@st.composite
def _mutated(draw: st.DrawFn, key: str) -> tuple[str, Any, str]:
    """(def, instance with one value somewhere replaced by a bad one, where)."""
    name, instance = draw(st.sampled_from(_instances(key)))
    places: list[tuple[Any, ...]] = []

    def collect(value: Any, path: tuple[Any, ...]) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                places.append((*path, k))
                collect(v, (*path, k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                places.append((*path, i))
                collect(v, (*path, i))

    collect(instance, ())
    if not places:
        return name, instance, "$"
    path = draw(st.sampled_from(places))
    bad = draw(BAD_VALUES)

    def replace(value: Any, rest: tuple[Any, ...]) -> Any:
        if not rest:
            return bad
        head, tail = rest[0], rest[1:]
        if isinstance(value, dict):
            return {**value, head: replace(value[head], tail)}
        return [*value[:head], replace(value[head], tail), *value[head + 1 :]]

    return name, replace(instance, path), ".".join(map(str, path))


@pytest.mark.parametrize("pkg", PACKAGES, ids=IDS)
@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,  # the same 300 examples on every run: CI stays reproducible
)
@given(data=st.data())
def test_random_mutations_agree_with_the_typescript_sdk(pkg: Package, data: st.DataObject) -> None:
    if node_executable() is None:
        pytest.skip("node is not installed")
    ensure_node_modules()
    name, value, where = data.draw(_mutated(pkg.key))
    last = where.rpartition(".")[2]
    if (name, last) in KNOWN_DIFFERENCES:
        return
    ts: dict[str, Any] = _zod_process().ask({"schema": pkg.key, "def": name, "value": value})
    if ts.get("missing"):
        return
    model = getattr(pkg.models, name)
    try:
        ours: Any = model.model_validate_lenient(value).model_dump(mode="json", by_alias=True)
    except ValueError:
        ours = None
    assert (ours is not None) == ts["ok"], f"{name} at {where}: {json.dumps(value)[:300]}"
    if ours is not None:
        assert _kept(ts["value"], ours), f"{name} at {where}: {ts['value']} vs {ours}"
