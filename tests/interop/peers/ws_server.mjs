#!/usr/bin/env node
// The TypeScript echo agent (agent.mjs) served over WebSocket by the SDK's `AcpServer`
// and its Node upgrade handler (`ws` 8, as Node 20 has no WebSocket). Prints its port,
// listens on 127.0.0.1, and shuts the server down (1001 to open sockets) when stdin ends.
//
// Usage: node ws_server.mjs
import { createServer } from "node:http";
import { WebSocketServer } from "ws";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import { createNodeWebSocketUpgradeHandler } from "@agentclientprotocol/sdk/experimental/node";
import { app } from "./agent.mjs";

const server = new AcpServer({ createAgent: () => app });
const http = createServer((req, res) => res.writeHead(426).end());
http.on("upgrade", createNodeWebSocketUpgradeHandler(server, new WebSocketServer({ noServer: true })));
http.listen(0, "127.0.0.1", () => console.log(http.address().port));
process.stdin
  .on("end", async () => {
    await server.close();
    process.exit(0);
  })
  .resume();
