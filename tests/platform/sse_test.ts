import assert from "node:assert/strict";
import { type SseEvent, SseParser } from "../../platform/sse.ts";

function parseInChunks(chunks: string[]): SseEvent[] {
  const parser = new SseParser({ unterminated: true });
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

// The gateway's reading of an upstream's SSE body (tools/kit/transport/http_client.ts):
// ids kept, bytes decoded as they come, an event left open at the end dropped.
const UPSTREAM = ": keep-alive\r\n" +
  'event: message\r\nid: 7\r\ndata: {"a":\r\ndata:  1}\r\n\r\n' +
  "data:é✓\n\n" +
  "id: 8\n\n" +
  "event: other\rdata: x\r\r" +
  "retry: 10\ndata\n\n" +
  "data: unterminated";

const UPSTREAM_EVENTS: SseEvent[] = [
  { event: "message", data: '{"a":\n 1}', id: "7" },
  { event: "message", data: "é✓" },
  { event: "message", data: "", id: "8" },
  { event: "other", data: "x" },
  { event: "message", data: "" },
];

function parseBytes(chunks: Uint8Array[]): SseEvent[] {
  const decoder = new TextDecoder();
  const parser = new SseParser({ ids: true });
  const events = chunks.flatMap((chunk) =>
    parser.push(decoder.decode(chunk, { stream: true }))
  );
  return [...events, ...parser.push(decoder.decode()), ...parser.end()];
}

Deno.test("sse, ids kept: fields, CRLF/CR/LF, comments, ids, and a dropped unterminated event", () => {
  const bytes = new TextEncoder().encode(UPSTREAM);
  // "data" with no colon is an empty data line: an event with empty data, which the transport skips.
  assert.deepEqual(parseBytes([bytes]), UPSTREAM_EVENTS);
});

Deno.test("sse, ids kept: the same events for every split of the bytes into two and three chunks", () => {
  const bytes = new TextEncoder().encode(UPSTREAM);
  for (let i = 0; i <= bytes.length; i++) {
    assert.deepEqual(
      parseBytes([bytes.subarray(0, i), bytes.subarray(i)]),
      UPSTREAM_EVENTS,
      `split at ${i}`,
    );
    const j = Math.min(bytes.length, i + 3);
    assert.deepEqual(
      parseBytes([
        bytes.subarray(0, i),
        bytes.subarray(i, j),
        bytes.subarray(j),
      ]),
      UPSTREAM_EVENTS,
      `split at ${i} and ${j}`,
    );
  }
});
