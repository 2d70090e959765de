#!/usr/bin/env node
// ACP v1 agent on the TypeScript SDK that speaks the echo agent's prompt command
// language (see commands.mjs and examples/echo_agent.py). Used by the interop tests
// (Python client -> TS agent), the transcript capture, and the benchmarks.
//
// Usage: node agent.mjs [--quiet] [--max-message-bytes N]
// Imported, it only exports the agent (`app`), as router_agent.mjs does.
import * as acp from "@agentclientprotocol/sdk";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import { chunkText, echoPieces, parseCommand, promptText } from "./commands.mjs";

const args = process.argv.slice(2);
const quiet = args.includes("--quiet");
const maxIndex = args.indexOf("--max-message-bytes");
const maxMessageBytes =
  maxIndex >= 0 ? Number(args[maxIndex + 1]) : Number(process.env.ECHO_AGENT_MAX_MESSAGE_BYTES || 0) || undefined;
const log = quiet ? () => {} : (...parts) => console.error("[ts-agent]", ...parts);

let sessionCount = 0;
/** Session id -> AbortController of the running turn, aborted by `session/cancel`. */
const turns = new Map();

function send(client, sessionId, update) {
  return client.notify(acp.methods.client.session.update, { sessionId, update });
}

function text(value) {
  return { type: "text", text: value };
}

function messageChunk(client, sessionId, value) {
  return send(client, sessionId, { sessionUpdate: "agent_message_chunk", content: text(value) });
}

/** Resolve after `ms`, or early with the name of the first signal that aborts. */
function sleep(ms, signals) {
  return new Promise((resolve) => {
    const listeners = [];
    const done = (why) => {
      clearTimeout(timer);
      for (const [signal, listener] of listeners) signal.removeEventListener("abort", listener);
      resolve(why);
    };
    const timer = setTimeout(() => done("elapsed"), ms);
    for (const [name, signal] of Object.entries(signals)) {
      if (signal.aborted) return done(name);
      const listener = () => done(name);
      listeners.push([signal, listener]);
      signal.addEventListener("abort", listener, { once: true });
    }
  });
}

async function askPermission(client, sessionId, turnSignal, requestSignal) {
  // One controller aborts the outgoing request (sending `$/cancel_request`) when
  // either the turn (`session/cancel`) or our own prompt request is cancelled.
  const abort = new AbortController();
  const onAbort = () => abort.abort();
  turnSignal.addEventListener("abort", onAbort, { once: true });
  requestSignal.addEventListener("abort", onAbort, { once: true });
  try {
    const response = await client.request(
      acp.methods.client.session.requestPermission,
      {
        sessionId,
        toolCall: { toolCallId: "perm-1", title: "Echo permission", kind: "execute", status: "pending" },
        options: [
          { optionId: "allow", name: "Allow", kind: "allow_once" },
          { optionId: "reject", name: "Reject", kind: "reject_once" },
        ],
      },
      { cancellationSignal: abort.signal },
    );
    return response.outcome;
  } catch (error) {
    if (error instanceof acp.RequestError && error.code === -32800) return { outcome: "cancelled" };
    throw error;
  } finally {
    turnSignal.removeEventListener("abort", onAbort);
    requestSignal.removeEventListener("abort", onAbort);
  }
}

async function runCommand(command, { sessionId, client, turnSignal, requestSignal }) {
  switch (command.kind) {
    case "sleep": {
      const why = await sleep(command.ms, { turn: turnSignal, request: requestSignal });
      if (why === "request") throw acp.RequestError.requestCancelled();
      if (why === "turn") return "cancelled";
      await messageChunk(client, sessionId, `slept ${command.ms}`);
      return "end_turn";
    }
    case "sleep-ignore":
      await sleep(command.ms, {});
      return "end_turn";
    case "chunks":
      for (let i = 0; i < command.n; i++) {
        // Cancellation is seen between chunks, as in the Python echo agent.
        if (requestSignal.aborted) throw acp.RequestError.requestCancelled();
        if (turnSignal.aborted) return "cancelled";
        await messageChunk(client, sessionId, chunkText(i, command.size));
      }
      return "end_turn";
    case "permission": {
      const outcome = await askPermission(client, sessionId, turnSignal, requestSignal);
      const label = outcome.outcome === "selected" ? `selected:${outcome.optionId}` : outcome.outcome;
      await messageChunk(client, sessionId, `permission:${label}`);
      if (requestSignal.aborted) throw acp.RequestError.requestCancelled();
      return turnSignal.aborted || outcome.outcome === "cancelled" ? "cancelled" : "end_turn";
    }
    case "read": {
      let chunk;
      try {
        const response = await client.request(acp.methods.client.fs.readTextFile, { sessionId, path: command.path });
        chunk = response.content;
      } catch (error) {
        if (!(error instanceof acp.RequestError)) throw error;
        chunk = `read-error:${error.code}:${error.message}`;
      }
      await messageChunk(client, sessionId, chunk);
      return "end_turn";
    }
    case "mixed":
      for (const update of MIXED_UPDATES) await send(client, sessionId, update);
      return "end_turn";
    case "error":
      throw new acp.RequestError(command.code, command.message);
    case "echo":
      for (const piece of echoPieces(command.text)) await messageChunk(client, sessionId, piece);
      return "end_turn";
  }
  throw new Error(`unknown command kind ${command.kind}`);
}

/** What `mixed` streams: one of each common update kind, then a message chunk. */
const MIXED_UPDATES = [
  { sessionUpdate: "agent_thought_chunk", content: text("thinking") },
  { sessionUpdate: "tool_call", toolCallId: "call-1", title: "Echo tool", kind: "read", status: "pending" },
  {
    sessionUpdate: "tool_call_update",
    toolCallId: "call-1",
    status: "completed",
    content: [{ type: "content", content: text("tool done") }],
  },
  { sessionUpdate: "plan", entries: [{ content: "echo the prompt", priority: "high", status: "completed" }] },
  { sessionUpdate: "agent_message_chunk", content: text("mixed done") },
];

export const app = acp
  .agent({ name: "ts-echo-agent" })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: { loadSession: false },
    agentInfo: { name: "ts-echo-agent", version: "1.0.0" },
  }))
  .onRequest(acp.methods.agent.session.new, () => ({ sessionId: `sess-${++sessionCount}` }))
  .onRequest(acp.methods.agent.session.prompt, async ({ params, signal, client }) => {
    const { sessionId } = params;
    const turn = new AbortController();
    turns.set(sessionId, turn);
    const command = parseCommand(promptText(params.prompt));
    log("prompt", sessionId, command.kind);
    try {
      const stopReason = await runCommand(command, { sessionId, client, turnSignal: turn.signal, requestSignal: signal });
      return { stopReason };
    } finally {
      if (turns.get(sessionId) === turn) turns.delete(sessionId);
    }
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    log("session/cancel", params.sessionId);
    turns.get(params.sessionId)?.abort();
  })
  .onRequest("_echo/ping", (params) => params, ({ params }) => ({ pong: params }));

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const stream = acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin), { maxMessageBytes });
  const connection = app.connect(stream);
  await connection.closed;
  log("connection closed");
  process.exit(0);
}
