#!/usr/bin/env node
// The TypeScript SDK's client (`createHttpStream` or `createWebSocketStream`) with a prompt
// in flight when the test kills the worker behind the load balancer (tests/scaleout/):
// initialize and session/new, print {agentName} (the test then kills that worker), send
// `sleep 30000`, and print how the prompt settled: {settled: "error"|"answer", code,
// message, ms} (ms from the prompt to its settling). Exits 0 either way.
//
// Usage: node killed_worker_client.mjs <http://host:port/acp | ws://host:port/acp>
import * as acp from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import WebSocket from "ws";

const [url] = process.argv.slice(2);
const { client, methods } = acp;
const app = client({ name: "ts-killed-worker-client" });
const stream = url.startsWith("ws")
  ? createWebSocketStream(url, { WebSocket })
  : createHttpStream(url);
let outcome;
try {
  await app.connectWith(stream, async (ctx) => {
    const init = await ctx.request(methods.agent.initialize, { protocolVersion: 1 });
    const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: "/tmp", mcpServers: [] });
    console.log(JSON.stringify({ agentName: init.agentInfo?.name }));
    const started = Date.now();
    try {
      await ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "sleep 30000" }],
      });
      outcome = { settled: "answer", ms: Date.now() - started };
    } catch (error) {
      outcome = { settled: "error", code: error.code ?? null, message: String(error.message ?? error), ms: Date.now() - started };
    }
  });
} catch (error) {
  outcome ??= { settled: "connection", message: String(error?.message ?? error) };
}
console.log(JSON.stringify(outcome));
process.exit(0);
