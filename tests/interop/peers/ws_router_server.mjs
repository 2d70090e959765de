#!/usr/bin/env node
// The TypeScript SDK's v1/v2 `agentProtocolRouter` (the echo agents of router_agent.mjs)
// served over WebSocket by `AcpServer` and its Node upgrade handler: a fresh router per
// socket. Prints its port, listens on 127.0.0.1, and shuts down when stdin ends.
//
// Usage: node ws_router_server.mjs
import { createServer } from "node:http";
import { WebSocketServer } from "ws";
import * as v2 from "@agentclientprotocol/sdk/experimental/v2";
import { AcpServer } from "@agentclientprotocol/sdk/experimental/server";
import { createNodeWebSocketUpgradeHandler } from "@agentclientprotocol/sdk/experimental/node";
import { app as echoV1 } from "./agent.mjs";
import { app as echoV2 } from "./v2_agent.mjs";

const server = new AcpServer({ createAgent: () => v2.agentProtocolRouter().withV1(echoV1).withV2(echoV2) });
const http = createServer((req, res) => res.writeHead(426).end());
http.on("upgrade", createNodeWebSocketUpgradeHandler(server, new WebSocketServer({ noServer: true })));
http.listen(0, "127.0.0.1", () => console.log(http.address().port));
process.stdin
  .on("end", async () => {
    await server.close();
    process.exit(0);
  })
  .resume();
