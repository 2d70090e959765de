// Node's WHATWG URL parser as an oracle, one request per stdin line: a JSON string in,
// `true` or `false` (does `new URL(input)`, no base, parse?) out. For the Python SDK's
// differential test of acp_runtime._whatwg_url (tests/interop/test_whatwg_url_vs_node.py).
//
// `new URL` rather than `URL.canParse`: the same parser, but Node 20's `URL.canParse`
// answers `false` for a valid URL with a Latin-1 character ("http://\u00e9.com") once V8
// has optimized the call (its fast path hands the one-byte string to the parser as if it
// were UTF-8); `new URL` takes no such path.
import { createInterface } from "node:readline";

function parses(input) {
  try {
    new URL(input);
    return true;
  } catch {
    return false;
  }
}

for await (const line of createInterface({ input: process.stdin })) {
  process.stdout.write(JSON.stringify(parses(JSON.parse(line))) + "\n");
}
