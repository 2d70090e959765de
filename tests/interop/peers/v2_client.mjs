#!/usr/bin/env node
// ACP v2 client on the TypeScript SDK (experimental/v2 entry point): one prompt run to
// idle, then a second prompt stopped with session/cancel once it is running. Prints one
// JSON event per line (initialize, session, prompt_response, update, agent_exit, done).
//
// Usage: node v2_client.mjs [--transcript FILE] [--cwd DIR] PROMPT LONG_PROMPT -- AGENT_CMD [ARGS...]
import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { Transcript } from "./transcript.mjs";

const argv = process.argv.slice(2);
const options = { "--transcript": null, "--cwd": process.cwd() };
while (argv[0] in options) {
  const [name, value] = argv.splice(0, 2);
  options[name] = value;
}
const transcriptPath = options["--transcript"];
const transcript = new Transcript();
const split = argv.indexOf("--");
const [prompt, longPrompt] = argv.slice(0, split);
const agentCommand = argv.slice(split + 1);

const emit = (event, fields = {}) => process.stdout.write(JSON.stringify({ event, ...fields }) + "\n");

/** Resolves the next time a session/update matches `predicate`. */
const waiters = [];
const nextUpdate = (predicate) => new Promise((resolve) => waiters.push({ predicate, resolve }));

const app = acp.client({ name: "ts-v2-client" }).onNotification(acp.methods.client.session.update, ({ params }) => {
  emit("update", { update: params.update });
  for (const waiter of waiters.splice(0)) {
    if (waiter.predicate(params.update)) waiter.resolve(params.update);
    else waiters.push(waiter);
  }
});

const child = spawn(agentCommand[0], agentCommand.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
let stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
if (transcriptPath) stream = transcript.wrapClientStream(stream);
const connection = app.connect(stream);
const ctx = connection.agent;
const isState = (state) => (update) => update.sessionUpdate === "state_update" && update.state === state;
const text = (value) => [{ type: "text", text: value }];

const init = await ctx.request(acp.methods.agent.initialize, {
  protocolVersion: acp.PROTOCOL_VERSION,
  info: { name: "ts-v2-client", version: "1.0.0" },
});
emit("initialize", { result: init });
const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd: options["--cwd"] });
emit("session", { sessionId });

let idle = nextUpdate(isState("idle"));
emit("prompt_response", { result: await ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: text(prompt) }) });
await idle;

const running = nextUpdate(isState("running"));
idle = nextUpdate(isState("idle"));
emit("prompt_response", { result: await ctx.request(acp.methods.agent.session.prompt, { sessionId, prompt: text(longPrompt) }) });
await running;
await ctx.notify(acp.methods.agent.session.cancel, { sessionId });
await idle;

child.stdin.end();
emit("agent_exit", await exited);
connection.close();
if (transcriptPath) await transcript.save(transcriptPath);
emit("done");
process.exit(0);
