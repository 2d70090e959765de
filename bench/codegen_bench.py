"""Benchmark of the generated packages: generation time, import time, validate+dump speed.

Prints one JSON object per line: one per measurement, then a ``summary``. The
validate+dump numbers are measured side by side, in the same process and run,
with the PyPI package ``agent-client-protocol==0.12.1`` (module ``acp.schema``,
protocol v1), and reported as ratios.

    python bench/codegen_bench.py            # full: all four schemas, more runs (about a minute)
    python bench/codegen_bench.py --quick    # a few seconds, for CI: v1 only, fewer runs

Timings on a shared VM vary by about +-20 % between runs; compare ratios from one run.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PEER = "acp.schema"
PEER_DIST = "agent-client-protocol"
GENERATED = {
    "v1": "acp_generated.v1",
    "v1/unstable": "acp_generated.v1.unstable",
    "v2": "acp_generated.v2",
    "v2/unstable": "acp_generated.v2.unstable",
}

Record = dict[str, Any]


@dataclass(frozen=True)
class Settings:
    schemas: tuple[str, ...]
    generate_runs: int
    import_runs: int
    op_repeats: int
    op_batch_seconds: float


QUICK = Settings(("v1",), 1, 2, 3, 0.03)
FULL = Settings(tuple(GENERATED), 3, 10, 21, 0.1)


def spread(samples: list[float], unit: str = "s") -> Record:
    return {
        f"min_{unit}": round(min(samples), 6),
        f"median_{unit}": round(statistics.median(samples), 6),
        f"max_{unit}": round(max(samples), 6),
    }


# -- generation ---------------------------------------------------------------------


def bench_generate(settings: Settings) -> Iterator[Record]:
    """Time ``codegen.pipeline.generate_variant`` (preprocess + dcg + postprocess + templates)."""
    try:
        import datamodel_code_generator.__main__  # noqa: F401  (import cost is not generation)

        from codegen.pipeline import generate_variant, variants
    except ImportError as exc:
        yield {"kind": "generate", "skipped": f"generator not importable: {exc}"}
        return
    by_key = {v.key: v for v in variants()}
    for key in settings.schemas:
        variant = by_key[key]
        if not variant.locked.cache_path.exists():
            yield {
                "kind": "generate",
                "schema": key,
                "skipped": "schema cache missing: run `python -m codegen fetch`",
            }
            continue
        samples: list[float] = []
        size = 0
        for _ in range(settings.generate_runs):
            start = time.perf_counter()
            files = generate_variant(variant)
            samples.append(time.perf_counter() - start)
            size = sum(len(text) for text in files.values())
        yield {
            "kind": "generate",
            "schema": key,
            "tool": "codegen.pipeline.generate_variant",
            "release": variant.release.version,
            "runs": len(samples),
            "output_chars": size,
            **spread(samples),
        }


# -- import time ----------------------------------------------------------------------

_IMPORT_PROBE = """\
import importlib, sys, time
for name in sys.argv[2:]:
    importlib.import_module(name)
start = time.perf_counter()
importlib.import_module(sys.argv[1])
print(time.perf_counter() - start)
"""


def _import_once(module: str, preload: list[str]) -> float:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), str(REPO), env.get("PYTHONPATH", "")])
    out = subprocess.run(
        [sys.executable, "-c", _IMPORT_PROBE, module, *preload],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=REPO,
    )
    return float(out.stdout.strip())


def bench_imports(settings: Settings) -> Iterator[Record]:
    """Import time of each models module in a fresh interpreter, pydantic already imported.

    pydantic's own import is measured once as the baseline every package pays.
    """
    targets: list[tuple[str, str, list[str]]] = [("pydantic", "pydantic", [])]
    targets += [
        (GENERATED[key], f"{GENERATED[key]}.models", ["pydantic", "acp_runtime._methods"])
        for key in settings.schemas
    ]
    targets.append((f"{PEER_DIST} (peer)", PEER, ["pydantic"]))
    for label, module, preload in targets:
        try:
            samples = [_import_once(module, preload) for _ in range(settings.import_runs)]
        except subprocess.CalledProcessError as exc:
            yield {
                "kind": "import",
                "package": label,
                "module": module,
                "skipped": exc.stderr.strip().splitlines()[-1:],
            }
            continue
        yield {
            "kind": "import",
            "package": label,
            "module": module,
            "preloaded": preload,
            "runs": len(samples),
            **spread(samples),
        }


# -- validate + dump --------------------------------------------------------------------

TEXT = "Here is the refactored parser; the tests pass."


def session_update(version: int) -> Record:
    """``session/update`` params with an ``agent_message_chunk`` (v2 requires a messageId)."""
    update: Record = {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": TEXT},
    }
    if version == 2:
        update["messageId"] = "msg_7f3a"
    return {"sessionId": "sess_4b1c9e", "update": update}


def session_prompt(version: int) -> Record:
    """``session/prompt`` params: a text block and a resource link."""
    return {
        "sessionId": "sess_4b1c9e",
        "prompt": [
            {"type": "text", "text": "Refactor the parser in main.py and keep the tests green."},
            {
                "type": "resource_link",
                "uri": "file:///home/user/project/src/main.py",
                "name": "main.py",
                "mimeType": "text/x-python",
            },
        ],
    }


@dataclass(frozen=True)
class Subject:
    """One implementation of one message: the params model and its payload."""

    impl: str
    protocol: int
    message: str
    model: Any
    payload: Record


IMPLS: dict[str, tuple[str, int]] = {
    "acp_generated.v1": ("acp_generated.v1.models", 1),
    "acp_generated.v2": ("acp_generated.v2.models", 2),
    f"{PEER_DIST}==0.12.1": (PEER, 1),
}
"""Implementation -> (the module its models are in, the protocol version)."""


def subjects_of(impl: str) -> list[Subject]:
    """The two messages of one implementation; imports only its models."""
    module_name, version = IMPLS[impl]
    module = importlib.import_module(module_name)
    notification = {1: "SessionNotification", 2: "UpdateSessionNotification"}[version]
    return [
        Subject(
            impl,
            version,
            "session/update agent_message_chunk",
            getattr(module, notification),
            session_update(version),
        ),
        Subject(impl, version, "session/prompt", module.PromptRequest, session_prompt(version)),
    ]


def subjects(settings: Settings) -> list[Subject]:
    impls = [impl for impl in IMPLS if impl != "acp_generated.v2" or "v2" in settings.schemas]
    return [subject for impl in impls for subject in subjects_of(impl)]


def _dict_path(subject: Subject) -> Callable[[], Any]:
    model, payload = subject.model, subject.payload

    def op() -> Any:
        return model.model_validate(payload).model_dump(
            mode="json", by_alias=True, exclude_unset=True
        )

    return op


def _json_path(subject: Subject) -> Callable[[], Any]:
    model, raw = subject.model, json.dumps(subject.payload).encode()

    def op() -> Any:
        return model.model_validate_json(raw).model_dump_json(by_alias=True, exclude_unset=True)

    return op


PATHS: dict[str, Callable[[Subject], Callable[[], Any]]] = {
    "dict": _dict_path,  # model_validate + model_dump(mode="json"): what the runtime codec does
    "json": _json_path,  # model_validate_json + model_dump_json: bytes in, bytes out
}


def calibrate(op: Callable[[], Any], seconds: float) -> int:
    """How many calls of ``op`` take about ``seconds``."""
    n = 1
    while True:
        start = time.perf_counter()
        for _ in range(n):
            op()
        elapsed = time.perf_counter() - start
        if elapsed >= seconds / 4:
            return max(1, int(n * seconds / elapsed))
        n *= 4


def interleaved_rates(
    ops: list[Callable[[], Any]], settings: Settings
) -> tuple[list[list[float]], list[list[float]]]:
    """ops/s samples per op, wall clock and process CPU time, taking turns batch by batch.

    Taking turns keeps a load change on the shared machine from landing on one
    implementation only, so the ratios stay meaningful; CPU time leaves out the time
    other processes held the core.
    """
    sizes = [calibrate(op, settings.op_batch_seconds) for op in ops]
    rates: list[list[float]] = [[] for _ in ops]
    cpu_rates: list[list[float]] = [[] for _ in ops]
    for _ in range(settings.op_repeats):
        for op, n, samples, cpu_samples in zip(ops, sizes, rates, cpu_rates, strict=True):
            start, cpu_start = time.perf_counter(), time.process_time()
            for _ in range(n):
                op()
            samples.append(n / (time.perf_counter() - start))
            cpu_samples.append(n / max(time.process_time() - cpu_start, 1e-9))
    return rates, cpu_rates


def check_round_trip(subject: Subject) -> None:
    """Refuse to time an implementation that does not give the payload back unchanged."""
    dumped = _dict_path(subject)()
    if dumped != subject.payload:
        raise AssertionError(
            f"{subject.impl} {subject.message}: round trip changed the payload: "
            f"{dumped} != {subject.payload}"
        )


def bench_ops(settings: Settings) -> Iterator[Record]:
    """Each message and path: every implementation measured in turns (see interleaved_rates)."""
    all_subjects = subjects(settings)
    for subject in all_subjects:
        check_round_trip(subject)
    messages = dict.fromkeys(s.message for s in all_subjects)
    for message in messages:
        group = [s for s in all_subjects if s.message == message]
        for path, make in PATHS.items():
            rates, cpu_rates = interleaved_rates([make(s) for s in group], settings)
            for subject, samples, cpu in zip(group, rates, cpu_rates, strict=True):
                yield {
                    "kind": "ops",
                    "impl": subject.impl,
                    "protocol": subject.protocol,
                    "message": message,
                    "path": path,
                    "repeats": len(samples),
                    "best_ops_s": round(max(samples)),
                    "median_ops_s": round(statistics.median(samples)),
                    "median_cpu_ops_s": round(statistics.median(cpu)),
                }


def ratios(records: list[Record]) -> list[Record]:
    """Generated vs peer, per message and path (median ops/s; >1 means we are faster)."""
    peer = {
        (r["message"], r["path"]): r
        for r in records
        if r["kind"] == "ops" and r["impl"].startswith(PEER_DIST)
    }
    out: list[Record] = []
    for r in records:
        if r["kind"] != "ops" or r["impl"].startswith(PEER_DIST):
            continue
        base = peer.get((r["message"], r["path"]))
        if base is None:
            continue
        out.append(
            {
                "impl": r["impl"],
                "vs": base["impl"],
                "message": r["message"],
                "path": r["path"],
                "median_ratio": round(r["median_ops_s"] / base["median_ops_s"], 2),
                "best_ratio": round(r["best_ops_s"] / base["best_ops_s"], 2),
                "median_cpu_ratio": round(r["median_cpu_ops_s"] / base["median_cpu_ops_s"], 2),
            }
        )
    return out


def environment() -> Record:
    from importlib.metadata import version

    return {
        "python": platform.python_version(),
        "pydantic": version("pydantic"),
        "pydantic_core": version("pydantic-core"),
        "peer": f"{PEER_DIST}=={version(PEER_DIST)}",
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few seconds, for CI")
    parser.add_argument("--skip-generate", action="store_true", help="skip generation timing")
    args = parser.parse_args(argv)
    settings = QUICK if args.quick else FULL
    sys.path[:0] = [str(REPO / "src"), str(REPO)]
    started = time.perf_counter()
    load_before = os.getloadavg()[0]
    records: list[Record] = []
    stages = [bench_imports(settings), bench_ops(settings)]
    if not args.skip_generate:
        stages.insert(0, bench_generate(settings))
    for stage in stages:
        for record in stage:
            records.append(record)
            print(json.dumps(record), flush=True)
    summary = {
        "kind": "summary",
        "mode": "quick" if args.quick else "full",
        "seconds": round(time.perf_counter() - started, 1),
        "environment": environment(),
        # other work on a shared machine skews every timing; compare runs at similar load
        "load_average_1m": {"start": round(load_before, 2), "end": round(os.getloadavg()[0], 2)},
        "ratios": ratios(records),
    }
    print(json.dumps(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
