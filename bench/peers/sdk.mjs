// Loads @agentclientprotocol/sdk 2.4.0 from the interop tests' install
// (tests/interop/node_modules, `make setup`), so the benchmarks need no second copy.
const entry = new URL(
  "../../tests/interop/node_modules/@agentclientprotocol/sdk/dist/v1/stable/acp.js",
  import.meta.url,
);
export const acp = await import(entry.href);

/** CLOCK_MONOTONIC in ns, the clock Python's time.perf_counter_ns() reads on Linux. */
export function monotonicNs() {
  return Number(process.hrtime.bigint());
}

/** Import a package from tests/interop/node_modules (`ws`, the SDK's experimental entries). */
export async function interop(name) {
  const { createRequire } = await import("node:module");
  const require = createRequire(new URL("../../tests/interop/package.json", import.meta.url));
  const { pathToFileURL } = await import("node:url");
  return import(pathToFileURL(require.resolve(name)).href);
}
