"""``python -m bench --quick`` runs end to end and prints well-formed JSON (no timing asserts)."""

from __future__ import annotations

import json

import pytest

from tests.bench import run_python

# make test-bench (and CI) runs these; make test leaves them out
pytestmark = pytest.mark.bench


def test_quick_runtime_bench_prints_runs_and_a_summary() -> None:
    proc = run_python("-m", "bench", "--quick", timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    runs = [r for r in records if r["kind"] == "run"]
    summary = records[-1]
    assert summary["kind"] == "summary"
    ran = {r["impl"] for r in runs}
    skipped = {r["impl"] for r in records if r["kind"] == "skipped"}
    assert "this" in ran and ran | skipped == {"this", "pypi", "ts", "floor"}
    for run in runs:
        for workload in ("ping", "prompt", "inflight", "notify", "cancel", "mixed", "rss"):
            assert workload in run, (run["impl"], workload)
        assert run["notify"]["n"] == summary["spec"]["notify"]
        assert run["cancel"]["p50_us"] > 0
    ping = summary["metrics"]["ping.per_s"]
    assert ping["this"]["min"] <= ping["this"]["median"] <= ping["this"]["max"]
    for peer in ran - {"this"}:
        assert f"this_vs_{peer}" in ping


@pytest.mark.parametrize("server", ["hypercorn", "uvicorn", "direct"])
def test_quick_runtime_bench_over_websocket_runs_this_sdk_ts_and_the_floor(server: str) -> None:
    """``--transport websocket``: our client and server (under ``server``; ``direct``: on
    its own listener, no ASGI server), the TS client and AcpServer, and the floor
    (hand-written RFC 6455, no SDK), whose every workload must run and count what it was
    asked to."""
    proc = run_python(
        *("-m", "bench", "--quick", "--transport=websocket", f"--asgi-server={server}"),
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    summary = records[-1]
    assert summary["kind"] == "summary" and summary["transport"] == "websocket"
    assert summary["asgi_server"] == server
    ran = {r["impl"] for r in records if r["kind"] == "run"}
    skipped = {r["impl"]: r["reason"] for r in records if r["kind"] == "skipped"}
    assert {"this", "floor"} <= ran
    assert "pypi" in skipped and set(skipped) <= {"pypi", "ts"}  # ts: where node is absent
    for run in (r for r in records if r["kind"] == "run"):
        assert run["notify"]["n"] == summary["spec"]["notify"]
        assert run["mixed"]["chunks"] == summary["spec"]["mixed_chunks"]
        assert run["cancel"]["p50_us"] > 0
        if run["impl"] == "this":
            assert run["agent_async_library"] == "asyncio"


@pytest.mark.parametrize("server", ["hypercorn", "direct"])
def test_quick_runtime_bench_serves_our_websocket_agent_on_trio(server: str) -> None:
    """``--agent-backend trio``: our agent's server (under hypercorn, or on its own
    listener) runs on trio, as the agent itself reports, and every workload runs."""
    proc = run_python(
        *("-m", "bench", "--quick", "--transport=websocket", f"--asgi-server={server}"),
        *("--agent-backend=trio", "--impl=this"),
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    summary = records[-1]
    assert summary["agent_backend"] == "trio" and summary["asgi_server"] == server
    runs = [r for r in records if r["kind"] == "run"]
    assert [r["agent_async_library"] for r in runs] == ["trio"]
    assert runs[0]["notify"]["n"] == summary["spec"]["notify"]
    assert runs[0]["cancel"]["p50_us"] > 0


def test_the_agent_backend_trio_is_refused_where_it_cannot_run() -> None:
    for where in (("--transport=stdio",), ("--transport=websocket", "--asgi-server=uvicorn")):
        proc = run_python("-m", "bench", "--quick", "--agent-backend=trio", *where, timeout=60)
        assert proc.returncode == 2 and "--agent-backend trio" in proc.stderr


@pytest.mark.parametrize(
    ("pairs", "server"),
    [(False, "hypercorn"), (True, "hypercorn"), (False, "uvicorn")],
    ids=["ts-client-drives", "pairs", "ts-client-drives-uvicorn"],
)
def test_quick_runtime_bench_over_http_runs_ours_and_ts(pairs: bool, server: str) -> None:
    """``--transport http``: the TS client against our ``http_app`` (under ``server``) and
    against the TS ``AcpServer`` with its Node handler, in the same run; with ``--pairs``
    each SDK's client drives its own server instead (our ``connect_http`` against
    ``http_app``)."""
    proc = run_python(
        *("-m", "bench", "--quick", "--transport", "http"),
        *(["--pairs"] if pairs else []),
        *("--asgi-server", server),
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    summary = records[-1]
    assert summary["kind"] == "summary" and summary["transport"] == "http"
    assert summary["ts_client_drives"] is not pairs
    ran = {r["impl"] for r in records if r["kind"] == "run"}
    skipped = {r["impl"]: r["reason"] for r in records if r["kind"] == "skipped"}
    assert ran == {"this", "ts"}
    assert {"pypi", "floor"} <= set(skipped)
    for run in (r for r in records if r["kind"] == "run"):
        assert run["notify"]["n"] == summary["spec"]["notify"]
        assert run["inflight"]["n"] == summary["spec"]["inflight_total"]
    for figure in ("prompt.per_s", "inflight.per_s", "notify.per_s"):
        assert "this_vs_ts" in summary["metrics"][figure]


def test_quick_agent_side_bench_drives_every_agent_with_the_ts_client() -> None:
    """``--agent-side`` (issue #17): the TS SDK client drives each implementation's agent;
    the PyPI agent, which cannot handle ``$/cancel_request``, skips the cancel workload."""
    proc = run_python("-m", "bench", "--quick", "--agent-side", timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    summary = records[-1]
    assert summary["kind"] == "summary" and summary["agent_side"] is True
    runs = {r["impl"]: r for r in records if r["kind"] == "run"}
    skipped = {r["impl"] for r in records if r["kind"] == "skipped"}
    if skipped == {"this", "pypi", "ts", "floor"}:
        return  # no node here: every agent needs the TS client
    assert set(runs) | skipped == {"this", "pypi", "ts", "floor"} and "this" in runs
    for impl, run in runs.items():
        assert run["ping"]["n"] == summary["spec"]["ping"], impl
        assert run["notify"]["n"] == summary["spec"]["notify"], impl
    assert runs["this"]["cancel"]["p50_us"] > 0
    if "pypi" in runs:
        assert runs["pypi"]["cancel"]["n"] == 0


def test_the_asgi_floor_bench_prints_hypercorns_cpu_per_frame() -> None:
    proc = run_python(
        *("-m", "bench.asgi_floor", "--runs", "1", "--echoes", "50", "--frames", "200"),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    line = proc.stdout.strip()
    assert line.startswith("run 0: hypercorn + the least ASGI app: server CPU "), line
    figures = [float(word) for word in line.split() if word.replace(".", "", 1).isdigit()]
    assert len(figures) == 2 and all(figure > 0 for figure in figures), line
