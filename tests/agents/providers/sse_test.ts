import assert from "node:assert/strict";
import { type SseEvent, SseParser } from "../../../agents/providers/sse.ts";

function parseInChunks(chunks: string[]): SseEvent[] {
  const parser = new SseParser();
  return [...chunks.flatMap((c) => parser.push(c)), ...parser.end()];
}

const STREAM = ": keep-alive comment\r\n" +
  "event: message_start\r\n" +
  'data: {"a":1}\r\n\r\n' +
  "data: first line\n" +
  "data:second line\n" +
  "id: 7\n" +
  "retry: 100\n\n" +
  "data: [DONE]\r\r";

const EXPECTED: SseEvent[] = [
  { event: "message_start", data: '{"a":1}' },
  { event: "message", data: "first line\nsecond line" },
  { event: "message", data: "[DONE]" },
];

Deno.test("sse: CRLF, LF and CR line ends, comments, multi-line data", () => {
  assert.deepEqual(parseInChunks([STREAM]), EXPECTED);
});

Deno.test("sse: every possible chunk boundary gives the same events", () => {
  for (let i = 0; i <= STREAM.length; i++) {
    for (const j of [i, i + 1, i + 5]) {
      const chunks = [STREAM.slice(0, i), STREAM.slice(i, j), STREAM.slice(j)];
      assert.deepEqual(parseInChunks(chunks), EXPECTED, `split at ${i}/${j}`);
    }
  }
  // One character at a time, including a CR and its LF in separate chunks.
  assert.deepEqual(parseInChunks([...STREAM]), EXPECTED);
});

Deno.test("sse: a leading BOM is ignored; events without data are not dispatched", () => {
  assert.deepEqual(
    parseInChunks(["\uFEFFevent: ping\n\n", "data: x\n\n"]),
    [{ event: "message", data: "x" }],
  );
});

Deno.test("sse: an unterminated last event is still delivered at the end", () => {
  assert.deepEqual(parseInChunks(['data: {"done":true}']), [
    { event: "message", data: '{"done":true}' },
  ]);
});
