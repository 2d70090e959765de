#!/usr/bin/env node
// Benchmark driver on the TypeScript SDK: the client runs in this process, the agent
// (ts_agent.mjs) is its child over stdio pipes. Runs the same workloads as
// bench/drivers/harness.py and prints one JSON object with the same shape.
//
// Usage: node ts_client.mjs '<spec json>'   (spec: see bench/workload_spec.py)
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { acp, interop, monotonicNs } from "./sdk.mjs";

const spec = JSON.parse(process.argv[2]);
const now = () => process.hrtime.bigint();
const elapsedNs = (start) => Number(process.hrtime.bigint() - start);

/** Nearest-rank percentile, as bench/stats.py. */
function percentile(values, q) {
  const ordered = Float64Array.from(values).sort();
  return ordered[Math.max(1, Math.ceil((q / 100) * ordered.length)) - 1];
}

function latency(samples) {
  const us = (ns) => Math.round(ns / 100) / 10;
  return { p50_us: us(percentile(samples, 50)), p99_us: us(percentile(samples, 99)) };
}

function timed(n, elapsed, samples) {
  return { n, per_s: Math.round((n / (elapsed / 1e9)) * 10) / 10, ...latency(samples) };
}

async function sequential(call, n) {
  const samples = [];
  const start = now();
  for (let i = 0; i < n; i++) {
    const t = now();
    await call(i);
    samples.push(elapsedNs(t));
  }
  return timed(n, elapsedNs(start), samples);
}

async function inFlight(call, total, concurrency) {
  const samples = [];
  let issued = 0;
  const worker = async () => {
    while (issued < total) {
      issued += 1;
      const t = now();
      await call(issued);
      samples.push(elapsedNs(t));
    }
  };
  const start = now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { ...timed(total, elapsedNs(start), samples), concurrency };
}

const updates = { chunks: 0, ready: null };
const app = acp.client({ name: "ts-bench-client" }).onNotification(acp.methods.client.session.update, ({ params }) => {
  if (params.update.sessionUpdate === "agent_message_chunk") {
    updates.chunks += 1;
    updates.ready?.();
  }
});

// BENCH_AGENT (a JSON argument list) picks another agent: the agent-side mode of
// `python -m bench --agent-side`, where this client drives every implementation's agent.
const agentPath = fileURLToPath(new URL("./ts_agent.mjs", import.meta.url));
const [agentExe, ...agentArgs] = process.env.BENCH_AGENT
  ? JSON.parse(process.env.BENCH_AGENT)
  : [process.execPath, agentPath];
const child = spawn(agentExe, agentArgs, { stdio: ["pipe", "pipe", "inherit"] });
const exited = new Promise((resolve) => child.on("exit", resolve));
const connection = app.connect(await agentStream());

/** The agent's pipes, or with BENCH_TRANSPORT=websocket (http) a WebSocket (Streamable
 * HTTP) to the port it prints. */
async function agentStream() {
  const transport = process.env.BENCH_TRANSPORT;
  if (transport !== "websocket" && transport !== "http") {
    return acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  }
  const port = await new Promise((resolve) => child.stdout.once("data", (data) => resolve(String(data).trim())));
  if (transport === "http") {
    const { createHttpStream } = await interop("@agentclientprotocol/sdk/experimental/http-client");
    return createHttpStream(`http://127.0.0.1:${port}/acp`);
  }
  const { createWebSocketStream } = await interop("@agentclientprotocol/sdk/experimental/ws-client");
  const { default: WebSocket } = await interop("ws");
  return createWebSocketStream(`ws://127.0.0.1:${port}/acp`, { WebSocket });
}
const agent = connection.agent;

await agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
const { sessionId } = await agent.request(acp.methods.agent.session.new, { cwd: process.cwd(), mcpServers: [] });

const client = {
  ping: (i) => agent.request("_echo/ping", { n: i }),
  prompt: (text, options) =>
    agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] }, options),
  async stream(n, size) {
    updates.chunks = 0;
    await client.prompt(`chunks ${n} size ${size}`);
    return updates.chunks;
  },
  async cancelLatencyNs() {
    const ready = new Promise((resolve) => (updates.ready = resolve));
    const abort = new AbortController();
    const turn = client.prompt("wait-cancel", { cancellationSignal: abort.signal });
    await ready;
    updates.ready = null;
    const start = monotonicNs();
    abort.abort();
    try {
      await turn;
    } catch (error) {
      if (error?.data?.observedNs === undefined) throw error;
      return error.data.observedNs - start;
    }
    throw new Error("wait-cancel was answered without an error");
  },
};

const agentStats = () => agent.request("_bench/stats", {});
const cpuNs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) * 1000;
};

/** The figures of `work()` plus each side's CPU time per operation, in µs (see harness.py). */
async function withCpu(n, work) {
  const agentBefore = (await agentStats()).cpuNs;
  const clientBefore = cpuNs();
  const figures = await work();
  const clientCpu = cpuNs() - clientBefore;
  const agentCpu = (await agentStats()).cpuNs - agentBefore;
  const perOp = (ns) => Math.round(ns / n / 10) / 100;
  return { ...figures, client_cpu_us: perOp(clientCpu), agent_cpu_us: perOp(agentCpu) };
}

async function notifications(n, size) {
  const start = now();
  const received = await client.stream(n, size);
  const elapsed = elapsedNs(start);
  if (received !== n) throw new Error(`expected ${n} chunks, got ${received}`);
  return { n, bytes: size, per_s: Math.round((n / (elapsed / 1e9)) * 10) / 10 };
}

async function mixed(chunks, size, pings) {
  const start = now();
  const [stream, ping] = await Promise.all([notifications(chunks, size), sequential(client.ping, pings)]);
  return {
    chunks,
    bytes: size,
    chunks_per_s: stream.per_s,
    total_ms: Math.round(elapsedNs(start) / 1e5) / 10,
    pings,
    ping_p50_us: ping.p50_us,
    ping_p99_us: ping.p99_us,
  };
}

for (let i = 0; i < spec.warmup; i++) {
  await client.ping(i);
  await client.prompt("noop");
}
await client.stream(spec.warmup, spec.notify_bytes);
const figures = {};
figures.ping = await withCpu(spec.ping, () => sequential(client.ping, spec.ping));
figures.prompt = await withCpu(spec.prompt, () => sequential(() => client.prompt("noop"), spec.prompt));
figures.inflight = await withCpu(spec.inflight_total, () =>
  inFlight(client.ping, spec.inflight_total, spec.inflight_concurrency),
);
figures.notify = await withCpu(spec.notify, () => notifications(spec.notify, spec.notify_bytes));
// As many untimed cancels first as are timed (see `cancellations` in harness.py): this
// client's optimizing compiler works on the cancel path during the first 800 or so.
for (let i = 0; i < spec.cancel; i++) await client.cancelLatencyNs();
const cancelSamples = [];
for (let i = 0; i < spec.cancel; i++) cancelSamples.push(await client.cancelLatencyNs());
figures.cancel = { n: spec.cancel, mechanism: "$/cancel_request", ...latency(cancelSamples) };
figures.mixed = await mixed(spec.mixed_chunks, spec.mixed_chunk_bytes, spec.mixed_pings);
const { maxRssKb } = await agentStats();
figures.rss = { client_kb: process.resourceUsage().maxRSS, agent_kb: maxRssKb };

child.stdin.end();
await exited;
connection.close();
process.stdout.write(JSON.stringify(figures) + "\n");
process.exit(0);
