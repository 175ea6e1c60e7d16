import assert from "node:assert/strict";
import {
  type ByteSink,
  LineSplitter,
  LineWriter,
  writeAll,
} from "../../platform/line_frames.ts";
import { waitFor } from "../helpers.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

interface Split {
  lines: string[];
  oversized: number[];
}

function split(chunks: Uint8Array[], maxLine?: number): Split {
  const out: Split = { lines: [], oversized: [] };
  const splitter = new LineSplitter({
    line: (text) => out.lines.push(text),
    oversized: (length) => out.oversized.push(length),
  }, { maxLine });
  for (const chunk of chunks) splitter.push(chunk);
  splitter.end();
  return out;
}

const STREAM = '{"a":1}\n{"b":"κλειδί ✓ 🚀"}\r\n\n  \r\n{"c":3}\n{"last":true}';
const LINES = ['{"a":1}', '{"b":"κλειδί ✓ 🚀"}', '{"c":3}', '{"last":true}'];

Deno.test("line frames: several lines in one chunk, CRLF, blank lines skipped, a last line without newline", () => {
  assert.deepEqual(split([encoder.encode(STREAM)]), {
    lines: LINES,
    oversized: [],
  });
});

Deno.test("line frames: every byte boundary (inside multi-byte characters too) gives the same lines", () => {
  const bytes = encoder.encode(STREAM);
  for (let i = 0; i <= bytes.length; i++) {
    for (let j = i; j <= Math.min(bytes.length, i + 7); j++) {
      const chunks = [
        bytes.subarray(0, i),
        bytes.subarray(i, j),
        bytes.subarray(j),
      ];
      assert.deepEqual(split(chunks).lines, LINES, `split at ${i}, ${j}`);
    }
  }
  // One byte per chunk.
  assert.deepEqual(
    split([...bytes].map((byte) => Uint8Array.of(byte))).lines,
    LINES,
  );
});

Deno.test("line frames: a line over the limit is dropped whole, in one chunk or many; the next line still arrives", () => {
  const long = "x".repeat(100);
  const text = `{"before":1}\n${long}\n{"after":2}\n${long}`;
  const whole = split([encoder.encode(text)], 50);
  assert.deepEqual(whole, {
    lines: ['{"before":1}', '{"after":2}'],
    oversized: [100, 100],
  });
  const bytes = encoder.encode(text);
  const chunks = [];
  for (let i = 0; i < bytes.length; i += 7) {
    chunks.push(bytes.subarray(i, i + 7));
  }
  assert.deepEqual(split(chunks, 50), whole);
});

Deno.test("line frames: a line of 3 MB in 64 KiB chunks arrives whole", () => {
  const big = JSON.stringify({ value: "ab".repeat(1_500_000) });
  const bytes = encoder.encode(`${big}\n{"next":1}\n`);
  const chunks = [];
  for (let i = 0; i < bytes.length; i += 65536) {
    chunks.push(bytes.subarray(i, i + 65536));
  }
  const out = split(chunks);
  assert.equal(out.lines.length, 2);
  assert.equal(out.lines[0], big);
  assert.equal(out.lines[1], '{"next":1}');
});

/** A sink that records each write and takes at most `most` bytes per write. */
function recordingSink(
  most = Infinity,
): ByteSink & { writes: string[]; bytes: number[] } {
  const writes: string[] = [];
  const bytes: number[] = [];
  return {
    writes,
    bytes,
    write(chunk) {
      const taken = chunk.slice(0, Math.min(most, chunk.length));
      writes.push(decoder.decode(taken));
      bytes.push(...taken);
      return Promise.resolve(taken.length);
    },
  };
}

Deno.test("line frames: lines queued in one turn leave in one write, in order", async () => {
  const sink = recordingSink();
  const writer = new LineWriter(sink);
  const sent = ["one", "two", "three"].map((line) => writer.write(line));
  await Promise.all(sent);
  assert.deepEqual(sink.writes, ["one\ntwo\nthree\n"]);
  await writer.write("four");
  assert.deepEqual(sink.writes, ["one\ntwo\nthree\n", "four\n"]);
});

Deno.test("line frames: partial writes are continued until every byte is out", async () => {
  const sink = recordingSink(3);
  const writer = new LineWriter(sink);
  const lines = ["ünï", "códé", "🚀 end"];
  await Promise.all(lines.map((line) => writer.write(line)));
  const expected = "ünï\ncódé\n🚀 end\n";
  assert.equal(
    sink.writes.length,
    Math.ceil(encoder.encode(expected).length / 3),
  );
  // The sink took bytes, not characters: decode them joined.
  assert.equal(decoder.decode(Uint8Array.from(sink.bytes)), expected);
});

Deno.test("line frames: lines queued while a write runs go out together after it; drain waits for all", async () => {
  const writes: string[] = [];
  const gates: PromiseWithResolvers<void>[] = [];
  const sink: ByteSink = {
    async write(bytes) {
      const gate = Promise.withResolvers<void>();
      gates.push(gate);
      await gate.promise;
      writes.push(decoder.decode(bytes));
      return bytes.length;
    },
  };
  const writer = new LineWriter(sink);
  const first = writer.write("a");
  await waitFor(() => gates.length, (n) => n === 1);
  const later = [writer.write("b"), writer.write("c")];
  let drained = false;
  const drain = writer.drain().then(() => drained = true);
  gates[0]?.resolve();
  await first;
  await waitFor(() => gates.length, (n) => n === 2);
  assert.equal(drained, false, "b and c are not written yet");
  gates[1]?.resolve();
  await Promise.all(later);
  await drain;
  assert.deepEqual(writes, ["a\n", "b\nc\n"]);
  await writer.drain(); // nothing queued: resolves at once
});

Deno.test("line frames: a failed write rejects its lines and every later one", async () => {
  const broken: ByteSink = {
    write: () => Promise.reject(new Error("Broken pipe")),
  };
  const writer = new LineWriter(broken);
  const results = await Promise.allSettled([
    writer.write("a"),
    writer.write("b"),
  ]);
  assert.deepEqual(results.map((r) => r.status), ["rejected", "rejected"]);
  await assert.rejects(writer.write("c"), /Broken pipe/);
  await writer.drain();
});

Deno.test("line frames: writeAll loops over short writes", async () => {
  const sink = recordingSink(2);
  await writeAll(sink, encoder.encode("hello"));
  assert.deepEqual(sink.writes, ["he", "ll", "o"]);
});
