// Parse JSON values with the TypeScript SDK's zod schemas, one request per stdin line:
// {"schema": "v1" | "v1/unstable" | "v2" | "v2/unstable", "def": "ToolCallUpdate", "value": ...}
// -> {"ok": true, "value": <what zod kept>} | {"ok": false} | {"missing": true}
// For the Python SDK's lenient-parsing parity test (tests/interop/test_lenient_parity.py).
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";

const dist = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  "..", "node_modules", "@agentclientprotocol", "sdk", "dist",
);
const files = {
  "v1": "v1/schema/zod.gen.js",
  "v1/unstable": "v1/unstable/schema/zod.gen.js",
  "v2": "v2/schema/zod.gen.js",
  "v2/unstable": "v2/unstable/schema/zod.gen.js",
};
const modules = {};
for (const [key, file] of Object.entries(files)) {
  modules[key] = await import(pathToFileURL(path.join(dist, file)).href);
}
for await (const line of createInterface({ input: process.stdin })) {
  const { schema, def, value } = JSON.parse(line);
  const zod = modules[schema][`z${def}`];
  if (zod === undefined) {
    process.stdout.write(JSON.stringify({ missing: true }) + "\n");
    continue;
  }
  const parsed = zod.safeParse(value);
  process.stdout.write(
    JSON.stringify(parsed.success ? { ok: true, value: parsed.data } : { ok: false }) + "\n",
  );
}
