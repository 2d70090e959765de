#!/usr/bin/env node
// The TypeScript SDK's Streamable HTTP client (`createHttpStream`) through a load balancer
// with cookie affinity (tests/scaleout/): `count` connections one after another, each
// with a fresh `MemoryAcpCookieStore`: initialize, session/new, three `whoami` prompts,
// close. Then three more: one with a store S, one with a fresh store, one with S again
// (a reconnect keeping its store). The fetch wrapper records the `X-Served-By` header
// (the backend HAProxy chose) of every response. Prints one JSON line:
// {connections: [{agentName, answers, servedBy}], reconnects: [agentName x3]}.
//
// Usage: node affinity_client.mjs <http://host:port/acp> <count>
import * as acp from "@agentclientprotocol/sdk";
import {
  createHttpStream,
  MemoryAcpCookieStore,
} from "@agentclientprotocol/sdk/experimental/http-client";

const [url, count] = process.argv.slice(2);
const { client, methods } = acp;
let answers = [];
const app = client({ name: "ts-affinity-client" }).onNotification(
  methods.client.session.update,
  async ({ params }) => {
    const text = params.update?.content?.text;
    if (text !== undefined) answers.push(text);
  },
);

async function visit(cookieStore, prompts) {
  const servedBy = [];
  const recordingFetch = async (input, init) => {
    const response = await fetch(input, init);
    servedBy.push(response.headers.get("x-served-by"));
    return response;
  };
  answers = [];
  let agentName;
  await app.connectWith(createHttpStream(url, { cookieStore, fetch: recordingFetch }), async (ctx) => {
    const init = await ctx.request(methods.agent.initialize, { protocolVersion: 1 });
    agentName = init.agentInfo?.name;
    const { sessionId } = await ctx.request(methods.agent.session.new, { cwd: "/tmp", mcpServers: [] });
    for (let i = 0; i < prompts; i++) {
      await ctx.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "whoami" }],
      });
    }
  });
  return { agentName, answers, servedBy };
}

const connections = [];
for (let i = 0; i < Number(count); i++) {
  connections.push(await visit(new MemoryAcpCookieStore(), 3));
}
const kept = new MemoryAcpCookieStore();
const reconnects = [];
for (const store of [kept, new MemoryAcpCookieStore(), kept]) {
  reconnects.push((await visit(store, 0)).agentName);
}
console.log(JSON.stringify({ connections, reconnects }));
process.exit(0);
