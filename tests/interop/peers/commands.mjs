// The prompt command language shared by the TypeScript peer agent and
// examples/echo_agent.py (whose docstring is the reference). Kept in its own
// module so the agent file reads as protocol handling only.

/** Join a prompt's text blocks and trim, as both echo agents do. */
export function promptText(prompt) {
  return prompt
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("")
    .trim();
}

const NON_NEGATIVE = /^\d+$/;
const INTEGER = /^-?\d+$/;

/** Parse prompt text into `{kind, ...}`; anything unrecognised is `echo`. */
export function parseCommand(text) {
  const words = text.split(/\s+/);
  const [head, ...rest] = words;
  if ((head === "sleep" || head === "sleep-ignore") && rest.length === 1 && NON_NEGATIVE.test(rest[0])) {
    return { kind: head, ms: Number(rest[0]) };
  }
  if (head === "chunks" && NON_NEGATIVE.test(rest[0] ?? "")) {
    if (rest.length === 1) return { kind: "chunks", n: Number(rest[0]), size: null };
    if (rest.length === 3 && rest[1] === "size" && NON_NEGATIVE.test(rest[2])) {
      return { kind: "chunks", n: Number(rest[0]), size: Number(rest[2]) };
    }
  }
  if (text === "permission" || text === "mixed") return { kind: text };
  if (head === "read" && rest.length > 0) {
    return { kind: "read", path: text.slice(head.length).trim() };
  }
  if (head === "error" && INTEGER.test(rest[0] ?? "")) {
    const message = text.slice(head.length).trim().slice(rest[0].length).trim();
    return { kind: "error", code: Number(rest[0]), message: message || "requested error" };
  }
  return { kind: "echo", text };
}

/** Split text into at most 3 non-empty pieces (by code point) that concatenate to it. */
export function echoPieces(text) {
  const points = Array.from(text);
  const k = Math.min(3, points.length);
  const pieces = [];
  for (let i = 0; i < k; i++) {
    const start = Math.floor((i * points.length) / k);
    const end = Math.floor(((i + 1) * points.length) / k);
    pieces.push(points.slice(start, end).join(""));
  }
  return pieces;
}

/** Text of chunk `i` (0-based) for `chunks <n> [size <s>]`. */
export function chunkText(i, size) {
  return size === null ? `chunk ${i}\n` : "x".repeat(size);
}
