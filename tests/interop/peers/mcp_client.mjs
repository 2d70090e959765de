#!/usr/bin/env node
// ACP v1 client on the TypeScript SDK that provides MCP servers over ACP with
// McpOverAcpProvider (stateless binding), to the agent command it spawns:
//
//   tools    a hand-written handler: tools/list, tools/call echo (one progress), slow
//            (waits until its ACP request is cancelled, then reports `aborted`)
//   shouter  an @modelcontextprotocol/server McpServer through fromMcpServer: shout
//   (bogus)  a declaration no server is registered for, so the agent gets -33001
//
// It sends the prompts `tools`, `echo hi from python`, `shout hi from python`, then
// `slow x`, which it stops with session/cancel once the slow tool runs. Prints one
// JSON event per line: initialize, chunk, prompt_response, aborted, agent_exit.
//
// Usage: node mcp_client.mjs -- AGENT_CMD [ARGS...]
import * as acp from "@agentclientprotocol/sdk/unstable";
import { fromMcpServer } from "@agentclientprotocol/sdk/experimental/mcp-server";
import { McpServer } from "@modelcontextprotocol/server";
import * as z from "zod/v4";
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

const { McpOverAcpProvider, methods } = acp;
const agentCommand = process.argv.slice(process.argv.indexOf("--") + 1);
const emit = (event, fields = {}) => process.stdout.write(JSON.stringify({ event, ...fields }) + "\n");

const listed = { resultType: "complete", ttlMs: 0, cacheScope: "private" };
const text = (value) => ({ resultType: "complete", content: [{ type: "text", text: value }] });
let slowStarted;
const slowRunning = new Promise((resolve) => (slowStarted = resolve));

async function tools(op) {
  if (op.method === "tools/list") {
    const schema = { type: "object", properties: { text: { type: "string" } } };
    return { result: { ...listed, tools: [{ name: "echo", inputSchema: schema }, { name: "slow", inputSchema: schema }] } };
  }
  if (op.method === "tools/call" && op.params.name === "echo") {
    const progressToken = op.params._meta?.progressToken;
    if (progressToken !== undefined) {
      await op.notify("notifications/progress", { progressToken, progress: 1, total: 2, message: "half way" });
    }
    return { result: text(`echo: ${op.params.arguments.text}`) };
  }
  if (op.method === "tools/call" && op.params.name === "slow") {
    slowStarted();
    await new Promise((resolve) => op.signal.addEventListener("abort", resolve, { once: true }));
    emit("aborted", { tool: "slow" });
    throw op.signal.reason;
  }
  return { error: { code: -32601, message: `Method not found: ${op.method}` } };
}

const shouter = fromMcpServer(() => {
  const server = new McpServer({ name: "shouter", version: "1" });
  server.registerTool("shout", { inputSchema: z.object({ text: z.string() }) }, async ({ text: value }, ctx) => {
    const progressToken = ctx.mcpReq._meta?.progressToken;
    if (progressToken !== undefined) {
      await ctx.mcpReq.notify({
        method: "notifications/progress",
        params: { progressToken, progress: 1, total: 1, message: "shouting" },
      });
    }
    return { content: [{ type: "text", text: `SHOUT: ${value.toUpperCase()}` }] };
  });
  return server;
});

const provider = new McpOverAcpProvider();
const app = acp
  .client({ name: "ts-mcp-client" })
  .onRequest(methods.client.mcp.message, provider.handleRequest)
  .onNotification(methods.client.session.update, ({ params }) => {
    if (params.update.sessionUpdate === "agent_message_chunk") emit("chunk", { text: params.update.content.text });
  });

const child = spawn(agentCommand[0], agentCommand.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
const connection = app.connect(acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));
const ctx = connection.agent;
const toolsServer = provider.registerServer(ctx, { name: "tools", handler: tools });
const shoutServer = provider.registerServer(ctx, { name: "shouter", handler: shouter.handler });

const init = await ctx.request(methods.agent.initialize, {
  protocolVersion: acp.PROTOCOL_VERSION,
  clientInfo: { name: "ts-mcp-client", version: "1" },
});
emit("initialize", { mcpAcp: init.agentCapabilities?.mcpCapabilities?.acp === true });
const { sessionId } = await ctx.request(methods.agent.session.new, {
  cwd: process.cwd(),
  mcpServers: [toolsServer.declaration, shoutServer.declaration, { type: "acp", name: "bogus", serverId: "no-such-server" }],
});
const prompt = (value) => ctx.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: value }] });
for (const value of ["tools", "echo hi from python", "shout hi from python"]) {
  emit("prompt_response", await prompt(value));
}
const slow = prompt("slow x");
await slowRunning;
await ctx.notify(methods.agent.session.cancel, { sessionId });
emit("prompt_response", await slow);

child.stdin.end();
emit("agent_exit", await exited);
connection.close();
process.exit(0);
