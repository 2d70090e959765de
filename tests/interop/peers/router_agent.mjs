#!/usr/bin/env node
// One agent for ACP v1 and v2 on the TypeScript SDK: its `agentProtocolRouter` (from the
// experimental v2 entry point) picks the app by `initialize.params.protocolVersion`.
// The twin of examples/router_agent.py.
//
// Usage: node router_agent.mjs [--quiet] [--versions 1,2] [--report]
// Imported, it only exports the router (`router`), as agent.mjs exports its app.
//   --versions  the routes configured: "1,2" (default), "1" or "2"
//   --report    instead of the echo agents (agent.mjs, v2_agent.mjs), apps whose
//               `initialize` answers with its params in `_meta.initializeParams`: on v1
//               exactly as the router handed them over (a raw handler), on v2 as the v2
//               app parsed them (its built-in parser cannot be replaced)
import * as v1 from "@agentclientprotocol/sdk";
import * as v2 from "@agentclientprotocol/sdk/experimental/v2";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";
import { app as echoV1 } from "./agent.mjs";
import { app as echoV2 } from "./v2_agent.mjs";

const args = process.argv.slice(2);
const versionsIndex = args.indexOf("--versions");
const versions = (versionsIndex >= 0 ? args[versionsIndex + 1] : "1,2").split(",").map(Number);
const report = args.includes("--report");

const implementation = (name) => ({ name, version: "1.0.0" });
const reportV1 = v1.agent({ name: "ts-router-v1" }).onRequest(
  "initialize",
  (params) => params,
  ({ params }) => ({ protocolVersion: 1, agentInfo: implementation("ts-router-v1"), _meta: { initializeParams: params } }),
);
const reportV2 = v2.agent({ name: "ts-router-v2" }).onRequest(v2.methods.agent.initialize, ({ params }) => ({
  protocolVersion: 2,
  info: implementation("ts-router-v2"),
  _meta: { initializeParams: params },
}));

let routes = v2.agentProtocolRouter();
if (versions.includes(1)) routes = routes.withV1(report ? reportV1 : echoV1);
if (versions.includes(2)) routes = routes.withV2(report ? reportV2 : echoV2);
export const router = routes;

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const connection = router.connect(v1.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
  await connection.closed;
  process.exit(0);
}
