#!/usr/bin/env node
// ACP v1 client on the TypeScript SDK that spawns an agent command and runs a
// scripted scenario, printing one JSON event per line on stdout for tests.
//
// Usage: node client.mjs [--transcript FILE] --scenario JSON -- AGENT_CMD [ARGS...]
//
// Scenario (all keys optional):
//   cwd                 session cwd (default: this process's cwd)
//   files               {absolute path: content} served by fs/read_text_file instead
//                       of the disk (keeps captured transcripts machine-independent)
//   permission          answer to session/request_permission: an optionId to select,
//                       "cancelled", or "hold" (answer only once the agent cancels the
//                       request with $/cancel_request). Default "allow".
//   onPermissionCancel  how a held request is answered once cancelled: "outcome"
//                       (the `cancelled` outcome, default) or "error" (-32800).
//   steps               list of {op: ...}:
//     {op: "prompt", text | blocks, as?, wait?}   session/prompt (wait defaults to true)
//     {op: "await", target}                       wait for a prompt started with wait:false
//     {op: "cancel"}                              session/cancel notification
//     {op: "abort", target}                       abort a pending request: $/cancel_request
//     {op: "wait_event", event, count?}           wait until `count` events named `event`
//     {op: "request", method, params, as?}        any request, e.g. _echo/ping
//     {op: "new_session"}                         another session/new (becomes current)
// initialize and one session/new always run first. Events: initialize, session,
// update, permission_request, permission_cancel_request, permission_response,
// read_text_file, result, error, agent_exit, done.
import * as acp from "@agentclientprotocol/sdk";
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { Readable, Writable } from "node:stream";
import { Transcript } from "./transcript.mjs";

function parseArgs(argv) {
  const split = argv.indexOf("--");
  if (split < 0 || split === argv.length - 1) throw new Error("usage: client.mjs [--transcript F] --scenario JSON -- AGENT_CMD...");
  const options = { transcript: null, scenario: {}, agent: argv.slice(split + 1) };
  const own = argv.slice(0, split);
  for (let i = 0; i < own.length; i += 2) {
    if (own[i] === "--transcript") options.transcript = own[i + 1];
    else if (own[i] === "--scenario") options.scenario = JSON.parse(own[i + 1]);
    else throw new Error(`unknown option ${own[i]}`);
  }
  return options;
}

/** Prints events and lets steps wait for them. */
class Events {
  counts = new Map();
  waiters = [];

  emit(event, fields = {}) {
    process.stdout.write(JSON.stringify({ event, ...fields }) + "\n");
    this.counts.set(event, (this.counts.get(event) ?? 0) + 1);
    this.waiters = this.waiters.filter((w) => (this.counts.get(w.event) >= w.count ? (w.resolve(), false) : true));
  }

  until(event, count = 1) {
    if ((this.counts.get(event) ?? 0) >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ event, count, resolve }));
  }
}

function errorFields(error) {
  if (error instanceof acp.RequestError) return { code: error.code, message: error.message, data: error.data };
  return { code: null, message: String(error?.message ?? error) };
}

function buildClient(scenario, events) {
  const answer = scenario.permission ?? "allow";
  return acp
    .client({ name: "ts-scenario-client" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      events.emit("update", { sessionId: params.sessionId, update: params.update });
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params, signal }) => {
      events.emit("permission_request", { params });
      let response;
      if (answer === "hold") {
        await new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener("abort", resolve, { once: true })));
        events.emit("permission_cancel_request", {});
        if (scenario.onPermissionCancel === "error") throw acp.RequestError.requestCancelled();
        response = { outcome: { outcome: "cancelled" } };
      } else if (answer === "cancelled") {
        response = { outcome: { outcome: "cancelled" } };
      } else {
        response = { outcome: { outcome: "selected", optionId: answer } };
      }
      events.emit("permission_response", { response });
      return response;
    })
    .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => {
      events.emit("read_text_file", { path: params.path });
      const files = scenario.files;
      if (files) {
        if (!Object.hasOwn(files, params.path)) throw acp.RequestError.resourceNotFound(params.path);
        return { content: files[params.path] };
      }
      try {
        return { content: await readFile(params.path, "utf8") };
      } catch {
        throw acp.RequestError.resourceNotFound(params.path);
      }
    });
}

async function runSteps(ctx, scenario, events) {
  const cwd = scenario.cwd ?? process.cwd();
  const init = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: false } },
    clientInfo: { name: "ts-scenario-client", version: "1.0.0" },
  });
  events.emit("initialize", { result: init });
  const newSession = async () => {
    const { sessionId } = await ctx.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
    events.emit("session", { sessionId });
    return sessionId;
  };
  let sessionId = await newSession();
  /** Label -> {settled, abort} for every request a step started. */
  const pending = new Map();
  const start = (label, method, params) => {
    const abort = new AbortController();
    const settled = ctx.request(method, params, { cancellationSignal: abort.signal }).then(
      (result) => events.emit("result", { as: label, result }),
      (error) => events.emit("error", { as: label, error: errorFields(error) }),
    );
    pending.set(label, { settled, abort });
    return settled;
  };
  let counter = 0;
  for (const step of scenario.steps ?? []) {
    const label = step.as ?? `${step.op}-${++counter}`;
    switch (step.op) {
      case "prompt":
      case "request": {
        const settled =
          step.op === "prompt"
            ? start(label, acp.methods.agent.session.prompt, { sessionId, prompt: step.blocks ?? [{ type: "text", text: step.text }] })
            : start(label, step.method, step.params);
        if (step.wait !== false) await settled;
        break;
      }
      case "await":
        await pending.get(step.target).settled;
        break;
      case "cancel":
        await ctx.notify(acp.methods.agent.session.cancel, { sessionId });
        break;
      case "abort":
        pending.get(step.target).abort.abort();
        break;
      case "wait_event":
        await events.until(step.event, step.count ?? 1);
        break;
      case "new_session":
        sessionId = await newSession();
        break;
      default:
        throw new Error(`unknown step ${JSON.stringify(step)}`);
    }
  }
  await Promise.all([...pending.values()].map((entry) => entry.settled));
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const events = new Events();
  const child = spawn(options.agent[0], options.agent.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const transcript = new Transcript();
  let stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  if (options.transcript) stream = transcript.wrapClientStream(stream);
  const app = buildClient(options.scenario, events);
  // Not connectWith: it closes the agent's stdin as soon as the steps finish, and
  // we want to observe the agent's own exit after EOF.
  const connection = app.connect(stream);
  let failure = null;
  try {
    await runSteps(connection.agent, options.scenario, events);
  } catch (error) {
    failure = error;
  }
  child.stdin.end();
  const exit = await exited;
  connection.close();
  events.emit("agent_exit", exit);
  if (options.transcript) await transcript.save(options.transcript);
  if (failure) {
    events.emit("failed", { error: errorFields(failure) });
    process.exit(1);
  }
  events.emit("done", {});
  process.exit(0);
}

await main();
