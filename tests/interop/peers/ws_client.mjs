#!/usr/bin/env node
// The TypeScript SDK's WebSocket client (`createWebSocketStream`, with `ws` 8) against an
// echo agent at a ws:// URL: initialize, session/new, a prompt with a permission round
// trip, a prompt reading a file, a prompt cancelled with $/cancel_request, a prompt ended
// by session/cancel, close; then on a fresh connection initialize and session/load of the
// same session (unless the agent cannot load sessions: loaded "unsupported"), close.
// Prints one JSON line: {ok, seen, stopReasons, cancelCode, cancelledTurn, loaded, replayed}.
//
// Usage: node ws_client.mjs <ws://host:port/acp> <absolute path to read>
import * as acp from "@agentclientprotocol/sdk";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import WebSocket from "ws";

const [url, path] = process.argv.slice(2);
const { client, methods } = acp;
const seen = [];
const app = client({ name: "ts-ws-client" })
  .onNotification(methods.client.session.update, async ({ params }) => {
    const text = params.update?.content?.text;
    if (text !== undefined) seen.push(text);
  })
  .onRequest(methods.client.session.requestPermission, async ({ params }) => ({
    outcome: { outcome: "selected", optionId: params.options[0].optionId },
  }))
  .onRequest(methods.client.fs.readTextFile, async () => ({ content: "line one\nline two\n" }));

const stopReasons = [];
let cancelCode = null;
let cancelledTurn = null;
const initialize = (ctx) =>
  ctx.request(methods.agent.initialize, {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: true } },
  });
const open = () => createWebSocketStream(url, { WebSocket });
let sessionId;
await app.connectWith(open(), async (ctx) => {
  await initialize(ctx);
  ({ sessionId } = await ctx.request(methods.agent.session.new, { cwd: "/tmp", mcpServers: [] }));
  const prompt = (text, options) =>
    ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] }, options);
  stopReasons.push((await prompt("permission")).stopReason);
  stopReasons.push((await prompt(`read ${path}`)).stopReason);
  const abort = new AbortController();
  const sleeping = prompt("sleep 30000", { cancellationSignal: abort.signal });
  setTimeout(() => abort.abort(), 200);
  try {
    await sleeping;
  } catch (error) {
    cancelCode = error.code ?? String(error);
  }
  const turn = prompt("sleep 30000");
  setTimeout(() => ctx.notify(methods.agent.session.cancel, { sessionId }), 200);
  cancelledTurn = (await turn).stopReason;
});
let loaded = null;
await app.connectWith(open(), async (ctx) => {
  const init = await initialize(ctx);
  if (!init.agentCapabilities?.loadSession) {
    loaded = "unsupported";
    return;
  }
  loaded = await ctx.request(methods.agent.session.load, { sessionId, cwd: "/tmp", mcpServers: [] });
  // Wait (up to 5 s) for the replay, should the answer overtake it.
  for (let i = 0; i < 250 && !seen.includes(`replay ${sessionId}`); i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
});
const replayed = seen.includes(`replay ${sessionId}`);
console.log(JSON.stringify({ ok: true, seen, stopReasons, cancelCode, cancelledTurn, loaded, replayed }));
process.exit(0);
