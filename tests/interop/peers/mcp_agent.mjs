#!/usr/bin/env node
// ACP v1 agent on the TypeScript SDK that calls the editor's MCP server over ACP with
// McpOverAcpCaller (stateless binding). On each prompt it makes the calls below against
// the first `{"type": "acp"}` server of session/new and answers with one message chunk:
// the JSON of every outcome.
//
//   list      tools/list
//   call      tools/call echo {text}, with a progressToken; `notes` gets the progress
//   badTool   tools/call of an unknown tool (an MCP result with isError)
//   badMethod an unknown MCP method (an inner MCP error)
//   outer     the outer error code of a request to an unknown server (-33001)
//   cancel    tools/call slow, aborted once its "started" progress arrives: the code
//
// Usage: node mcp_agent.mjs
import * as acp from "@agentclientprotocol/sdk/unstable";
import { Readable, Writable } from "node:stream";

const { McpOverAcpCaller, methods } = acp;
const caller = new McpOverAcpCaller({ clientInfo: { name: "ts-mcp-agent", version: "1" } });
const servers = new Map();

async function outerCode(promise) {
  try {
    await promise;
    return null;
  } catch (error) {
    return error.code ?? String(error);
  }
}

async function calls(client, serverId) {
  const notes = [];
  const out = {
    list: await caller.request(client, serverId, "tools/list", {}),
    call: await caller.request(
      client,
      serverId,
      "tools/call",
      { name: "echo", arguments: { text: "from ts" }, _meta: { progressToken: "p-1" } },
      { onNotification: (n) => notes.push(n) },
    ),
    badTool: await caller.request(client, serverId, "tools/call", { name: "nope", arguments: {} }),
    badMethod: await caller.request(client, serverId, "nope/method", {}),
    outer: await outerCode(caller.request(client, "no-such-server", "tools/list", {})),
  };
  const abort = new AbortController();
  out.cancel = await outerCode(
    caller.request(
      client,
      serverId,
      "tools/call",
      { name: "slow", arguments: {}, _meta: { progressToken: "p-2" } },
      { signal: abort.signal, onNotification: () => abort.abort() },
    ),
  );
  out.notes = notes;
  return out;
}

const app = acp
  .agent({ name: "ts-mcp-agent" })
  .onNotification(methods.agent.mcp.message, caller.handleNotification)
  .onRequest(methods.agent.initialize, () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: { mcpCapabilities: { acp: true } },
  }))
  .onRequest(methods.agent.session.new, ({ params }) => {
    const sessionId = `sess-${servers.size + 1}`;
    servers.set(sessionId, params.mcpServers.find((s) => acp.isMcpServerAcp(s)));
    return { sessionId };
  })
  .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
    const server = servers.get(params.sessionId);
    const out = await calls(client, server.serverId);
    await client.notify(methods.client.session.update, {
      sessionId: params.sessionId,
      update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: JSON.stringify(out) } },
    });
    return { stopReason: "end_turn" };
  });

const connection = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await connection.closed;
process.exit(0);
