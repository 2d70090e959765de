#!/usr/bin/env node
// ACP v2 agent on the TypeScript SDK (experimental/v2 entry point), the twin of
// examples/v2_agent.py: `session/prompt` answers {messageId} once the user message is
// inserted, the turn streams on and ends with a `state_update` idle; `sleep <ms>` works
// that long, other text is echoed word by word; `session/cancel` ends the turn as
// `cancelled`.
//
// Usage: node v2_agent.mjs [--quiet] [--chunk-delay SECONDS]
// Imported, it only exports the agent (`app`), as router_agent.mjs does.
import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import { setTimeout as delay } from "node:timers/promises";

const args = process.argv.slice(2);
const quiet = args.includes("--quiet");
const delayIndex = args.indexOf("--chunk-delay");
const chunkDelayMs = 1000 * (delayIndex >= 0 ? Number(args[delayIndex + 1]) : 0.05);
const log = quiet ? () => {} : (...parts) => console.error("[ts-v2-agent]", ...parts);

let sessionCount = 0;
let messageCount = 0;
/** Session id -> {chain: Promise of the previous turn, abort: AbortController of the running one}. */
const sessions = new Map();

function send(client, sessionId, update) {
  return client.notify(acp.methods.client.session.update, { sessionId, update });
}

async function runTurn(client, sessionId, text) {
  const session = sessions.get(sessionId);
  const abort = new AbortController();
  session.abort = abort;
  await send(client, sessionId, { sessionUpdate: "state_update", state: "running" });
  const replyId = `agent-${++messageCount}`;
  const say = (words) =>
    send(client, sessionId, { sessionUpdate: "agent_message_chunk", messageId: replyId, content: { type: "text", text: words } });
  let stopReason = "end_turn";
  try {
    const sleep = /^sleep\s+(\d+)$/.exec(text);
    if (sleep) {
      await delay(Number(sleep[1]), undefined, { signal: abort.signal });
      await say(`slept ${sleep[1]}`);
    } else {
      const words = text.split(/\s+/).filter(Boolean);
      for (const [i, word] of words.entries()) {
        await delay(chunkDelayMs, undefined, { signal: abort.signal });
        await say(i === 0 ? word : ` ${word}`);
      }
    }
  } catch (error) {
    if (error?.name !== "AbortError") throw error;
    stopReason = "cancelled";
  }
  session.abort = null;
  await send(client, sessionId, { sessionUpdate: "state_update", state: "idle", stopReason });
}

export const app = acp
  .agent({ name: "ts-v2-agent" })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    info: { name: "ts-v2-agent", version: "1.0.0" },
  }))
  .onRequest(acp.methods.agent.session.new, () => {
    const sessionId = `sess-${++sessionCount}`;
    sessions.set(sessionId, { chain: Promise.resolve(), abort: null });
    return { sessionId };
  })
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    const { sessionId, prompt } = params;
    const session = sessions.get(sessionId);
    const messageId = `user-${++messageCount}`;
    await send(client, sessionId, { sessionUpdate: "user_message", messageId, content: prompt });
    const text = prompt.filter((b) => b.type === "text").map((b) => b.text).join(" ").trim();
    // Turns of one session run one after another; the prompt is answered at insertion.
    session.chain = session.chain.then(() => runTurn(client, sessionId, text));
    log("inserted", messageId);
    return { messageId };
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    log("session/cancel", params.sessionId);
    sessions.get(params.sessionId)?.abort?.abort();
  });

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const connection = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
  await connection.closed;
  process.exit(0);
}
