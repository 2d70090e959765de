#!/usr/bin/env node
// Benchmark agent on the TypeScript SDK, over stdio (or BENCH_TRANSPORT=websocket / http). Same command language as
// this_agent.py (see its docstring): noop, chunks <n> size <s>, wait-cancel
// (answers -32800 with data.observedNs once the request's signal aborts),
// _echo/ping and _bench/stats.
import { Readable, Writable } from "node:stream";
import { acp, interop, monotonicNs } from "./sdk.mjs";

const CHUNKS = /^chunks (\d+) size (\d+)$/;

function chunk(client, sessionId, text) {
  return client.notify(acp.methods.client.session.update, {
    sessionId,
    update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
  });
}

function aborted(signal) {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", resolve, { once: true });
  });
}

const app = acp
  .agent({ name: "ts-bench-agent" })
  .onRequest(acp.methods.agent.initialize, () => ({ protocolVersion: acp.PROTOCOL_VERSION, agentCapabilities: {} }))
  .onRequest(acp.methods.agent.session.new, () => ({ sessionId: "bench-1" }))
  .onRequest(acp.methods.agent.session.prompt, async ({ params, signal, client }) => {
    const text = params.prompt
      .filter((block) => block.type === "text")
      .map((block) => block.text)
      .join("")
      .trim();
    if (text === "wait-cancel") {
      await chunk(client, params.sessionId, "ready");
      await aborted(signal);
      throw new acp.RequestError(-32800, "Request cancelled", { observedNs: monotonicNs() });
    }
    const m = CHUNKS.exec(text);
    if (m) {
      const piece = "x".repeat(Number(m[2]));
      for (let i = 0; i < Number(m[1]); i++) await chunk(client, params.sessionId, piece);
    }
    return { stopReason: "end_turn" };
  })
  .onRequest("_echo/ping", (params) => params, ({ params }) => ({ pong: params }))
  .onRequest("_bench/stats", (params) => params, () => {
    const { user, system } = process.cpuUsage();
    return { maxRssKb: process.resourceUsage().maxRSS, cpuNs: (user + system) * 1000 };
  });

if (process.env.BENCH_TRANSPORT === "websocket") {
  // The SDK's AcpServer and Node upgrade handler on 127.0.0.1; port on stdout, stop on stdin EOF.
  const { createServer } = await import("node:http");
  const { WebSocketServer } = (await interop("ws")).default;
  const { AcpServer } = await interop("@agentclientprotocol/sdk/experimental/server");
  const { createNodeWebSocketUpgradeHandler } = await interop("@agentclientprotocol/sdk/experimental/node");
  const server = new AcpServer({ createAgent: () => app });
  const http = createServer((req, res) => res.writeHead(426).end());
  http.on("upgrade", createNodeWebSocketUpgradeHandler(server, new WebSocketServer({ noServer: true })));
  http.listen(0, "127.0.0.1", () => console.log(http.address().port));
  process.stdin.on("end", () => process.exit(0)).resume();
} else if (process.env.BENCH_TRANSPORT === "http") {
  // The SDK's AcpServer and Node HTTP handler (Streamable HTTP) on 127.0.0.1, port on stdout.
  const { createServer } = await import("node:http");
  const { AcpServer } = await interop("@agentclientprotocol/sdk/experimental/server");
  const { createNodeHttpHandler } = await interop("@agentclientprotocol/sdk/experimental/node");
  const server = new AcpServer({ createAgent: () => app });
  const http = createServer(createNodeHttpHandler(server));
  http.listen(0, "127.0.0.1", () => console.log(http.address().port));
  process.stdin.on("end", () => process.exit(0)).resume();
} else {
  const connection = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
  await connection.closed;
  process.exit(0);
}
