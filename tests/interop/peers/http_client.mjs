#!/usr/bin/env node
// The TypeScript SDK's Streamable HTTP client (`createHttpStream`) against an echo agent at
// an http:// URL: initialize, session/new, a prompt with a permission round trip, a prompt
// reading a file, a prompt cancelled with session/cancel, one cancelled with
// $/cancel_request, close; then on a fresh connection initialize and session/load of the
// same session (unless the agent cannot load sessions: loaded "unsupported"), close. Prints one JSON line:
// {ok, connectionIds, seen, stopReasons, cancelCode, loaded, replayed}.
//
// Usage: node http_client.mjs <http://host:port/acp> <absolute path to read>
import * as acp from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";

const [url, path] = process.argv.slice(2);
const { client, methods } = acp;
const seen = [];
const app = client({ name: "ts-http-client" })
  .onNotification(methods.client.session.update, async ({ params }) => {
    const text = params.update?.content?.text;
    if (text !== undefined) seen.push(text);
  })
  .onRequest(methods.client.session.requestPermission, async ({ params }) => ({
    outcome: { outcome: "selected", optionId: params.options[0].optionId },
  }))
  .onRequest(methods.client.fs.readTextFile, async () => ({ content: "line one\nline two\n" }));

const initialize = (ctx) =>
  ctx.request(methods.agent.initialize, {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: true } },
  });
// Records the Acp-Connection-Id of each initialize answer, so the test can check that
// closing DELETEd both connections.
const connectionIds = [];
const recordingFetch = async (input, init) => {
  const response = await fetch(input, init);
  const id = response.headers.get("acp-connection-id");
  if (id) connectionIds.push(id);
  return response;
};
const open = () => createHttpStream(url, { fetch: recordingFetch });
const stopReasons = [];
let cancelCode = null;
let sessionId;
await app.connectWith(open(), async (ctx) => {
  await initialize(ctx);
  ({ sessionId } = await ctx.request(methods.agent.session.new, { cwd: "/tmp", mcpServers: [] }));
  const prompt = (text, options) =>
    ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] }, options);
  stopReasons.push((await prompt("permission")).stopReason);
  stopReasons.push((await prompt(`read ${path}`)).stopReason);
  const cancelled = prompt("sleep 30000");
  setTimeout(() => ctx.notify(methods.agent.session.cancel, { sessionId }), 200);
  stopReasons.push((await cancelled).stopReason);
  const abort = new AbortController();
  const sleeping = prompt("sleep 30000", { cancellationSignal: abort.signal });
  setTimeout(() => abort.abort(), 200);
  try {
    await sleeping;
  } catch (error) {
    cancelCode = error.code ?? String(error);
  }
});
let loaded = null;
await app.connectWith(open(), async (ctx) => {
  const init = await initialize(ctx);
  if (!init.agentCapabilities?.loadSession) {
    loaded = "unsupported";
    return;
  }
  loaded = await ctx.request(methods.agent.session.load, { sessionId, cwd: "/tmp", mcpServers: [] });
  // The replay comes on the session stream, the answer on the connection stream: two
  // streams, so the answer may be read first. Wait (up to 5 s) for the replay.
  for (let i = 0; i < 250 && !seen.includes(`replay ${sessionId}`); i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
});
const replayed = seen.includes(`replay ${sessionId}`);
console.log(JSON.stringify({ ok: true, connectionIds, seen, stopReasons, cancelCode, loaded, replayed }));
process.exit(0);
