// Records every JSON-RPC message of an SDK message stream, in order, for
// tests/corpus/transcripts/ (lines of {"dir": "c2a" | "a2c", "msg": ...}).
import { writeFile } from "node:fs/promises";

export class Transcript {
  entries = [];

  /** Wrap a client-side `{readable, writable}` stream so both directions are recorded. */
  wrapClientStream(stream) {
    const entries = this.entries;
    const writer = stream.writable.getWriter();
    return {
      readable: stream.readable.pipeThrough(
        new TransformStream({
          transform(msg, controller) {
            entries.push({ dir: "a2c", msg });
            controller.enqueue(msg);
          },
        }),
      ),
      writable: new WritableStream({
        write(msg) {
          entries.push({ dir: "c2a", msg });
          return writer.write(msg);
        },
        close: () => writer.close(),
        abort: (reason) => writer.abort(reason),
      }),
    };
  }

  async save(path) {
    await writeFile(path, this.entries.map((entry) => JSON.stringify(entry)).join("\n") + "\n");
  }
}
