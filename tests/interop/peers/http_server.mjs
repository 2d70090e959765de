#!/usr/bin/env node
// The TypeScript echo agent (agent.mjs) served by the SDK's `AcpServer` on one port, over
// Streamable HTTP (its Node HTTP handler, on /acp) and WebSocket (its upgrade handler, `ws`
// 8). For the reconnect flow the agent also answers `session/load`, replaying one chunk
// `replay:<sessionId>`. Prints its port, listens on 127.0.0.1, and closes the server
// (ending every stream) when stdin ends.
//
// Usage: node http_server.mjs [--router]
//   --router  serve the v1/v2 router of router_agent.mjs instead (the same echo agents)
import * as acp from "@agentclientprotocol/sdk";
import { createServer } from "node:http";
import { WebSocketServer } from "ws";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import {
  createNodeHttpHandler,
  createNodeWebSocketUpgradeHandler,
} from "@agentclientprotocol/sdk/experimental/node";
import { app } from "./agent.mjs";

app.onRequest(acp.methods.agent.session.load, async ({ params, client }) => {
  const content = { type: "text", text: `replay:${params.sessionId}` };
  await client.notify(acp.methods.client.session.update, {
    sessionId: params.sessionId,
    update: { sessionUpdate: "agent_message_chunk", content },
  });
  return {};
});

const agent = process.argv.includes("--router") ? (await import("./router_agent.mjs")).router : app;
const server = new AcpServer({ createAgent: () => agent });
const handle = createNodeHttpHandler(server);
const http = createServer((req, res) =>
  new URL(req.url, "http://localhost").pathname === "/acp" ? handle(req, res) : res.writeHead(404).end(),
);
http.on("upgrade", createNodeWebSocketUpgradeHandler(server, new WebSocketServer({ noServer: true })));
http.listen(0, "127.0.0.1", () => console.log(http.address().port));
process.stdin
  .on("end", async () => {
    await server.close();
    process.exit(0);
  })
  .resume();
