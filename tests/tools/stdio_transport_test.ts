// The kit's stdio transport (tools/kit/transport/stdio_server.ts) on in-memory
// streams: framing, envelope checks, order and drain, end of input, and an
// SDK server behind it answering over the same lines.

import assert from "node:assert/strict";
import {
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  LATEST_PROTOCOL_VERSION,
  Server,
} from "../../platform/mcp_sdk_server.ts";
import type { ByteSink } from "../../platform/line_frames.ts";
import { DenoStdioTransport } from "../../tools/kit/transport/stdio_server.ts";
import { envelopeProblem } from "../../tools/kit/transport/jsonrpc_envelope.ts";
import { waitFor } from "../helpers.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A transport on a pipe the test writes into and a sink it reads from. */
function harness(maxLine?: number) {
  const pipe = new TransformStream<Uint8Array, Uint8Array>();
  const input = pipe.writable.getWriter();
  const written: string[] = [];
  const output: ByteSink = {
    write(bytes) {
      written.push(decoder.decode(bytes));
      return Promise.resolve(bytes.length);
    },
  };
  const transport = new DenoStdioTransport({
    input: pipe.readable,
    output,
    maxLine,
  });
  const messages: JSONRPCMessage[] = [];
  const errors: string[] = [];
  let closes = 0;
  transport.onmessage = (message) => messages.push(message);
  transport.onerror = (error) => errors.push(error.message);
  transport.onclose = () => closes++;
  return {
    transport,
    messages,
    errors,
    written,
    closes: () => closes,
    send: (text: string) => input.write(encoder.encode(text)),
    end: () => input.close(),
    /** Output lines parsed. */
    lines: () =>
      written.join("").split("\n").filter((line) => line !== "").map(
        (line): unknown => JSON.parse(line),
      ),
  };
}

/** Lines the SDK's transport rejects too (the test below checks the parseable ones against its schema). */
const BAD_LINES = [
  "not json",
  '{"jsonrpc":"2.0","id":1,"method":"ping"', // cut short
  "[1,2]",
  '{"jsonrpc":"1.0","id":1,"method":"ping"}',
  '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
  '{"jsonrpc":"2.0","id":1,"method":"ping","extra":true}',
  '{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}',
  '{"jsonrpc":"2.0","id":1,"result":"ok"}',
  '{"jsonrpc":"2.0","id":1,"error":{"message":"no code"}}',
  '{"jsonrpc":"2.0","id":1}',
];

const ping = (id: number) => ({ jsonrpc: "2.0", id, method: "ping" });

Deno.test("stdio transport: messages split across chunks, several per chunk, CRLF and a last line without newline", async () => {
  const h = harness();
  await h.transport.start();
  const text = [ping(1), ping(2), ping(3)].map((m) => JSON.stringify(m))
    .join("\r\n");
  await h.send(text.slice(0, 10));
  await h.send(text.slice(10, 40));
  await h.send(text.slice(40));
  await h.end();
  await h.transport.ended;
  assert.deepEqual(h.messages, [ping(1), ping(2), ping(3)]);
  assert.deepEqual(h.errors, []);
  assert.equal(h.closes(), 0, "end of input does not close the transport");
});

Deno.test("stdio transport: a byte stream (as stdin is) is read into one reused buffer, split lines and all", async () => {
  const text = [ping(1), ping(2), ping(3)].map((m) => JSON.stringify(m))
    .join("\n") + "\n" + JSON.stringify(ping(4));
  const bytes = encoder.encode(text);
  let offset = 0;
  const sizes = new Set<number>();
  const input = new ReadableStream({
    type: "bytes",
    pull(controller) {
      const view = controller.byobRequest?.view;
      if (!view) throw new Error("expected a BYOB read");
      sizes.add(view.buffer.byteLength);
      if (offset >= bytes.length) {
        controller.close();
        controller.byobRequest?.respond(0);
        return;
      }
      // Small reads: messages span them.
      const n = Math.min(7, view.byteLength, bytes.length - offset);
      new Uint8Array(view.buffer, view.byteOffset, n).set(
        bytes.subarray(offset, offset + n),
      );
      offset += n;
      controller.byobRequest?.respond(n);
    },
  });
  const messages: JSONRPCMessage[] = [];
  const transport = new DenoStdioTransport({
    input,
    output: { write: (b) => Promise.resolve(b.length) },
  });
  transport.onmessage = (message) => messages.push(message);
  await transport.start();
  await transport.ended;
  assert.deepEqual(messages, [ping(1), ping(2), ping(3), ping(4)]);
  // Every read fills the transport's own 64 KiB buffer, handed back each time.
  assert.deepEqual([...sizes], [64 * 1024]);
});

Deno.test("stdio transport: malformed lines go to onerror and are skipped; the next message still arrives", async () => {
  const h = harness();
  await h.transport.start();
  const bad = BAD_LINES;
  await h.send(bad.join("\n") + "\n" + JSON.stringify(ping(7)) + "\n");
  await waitFor(() => h.messages.length, (n) => n === 1);
  assert.deepEqual(h.messages, [ping(7)]);
  assert.equal(h.errors.length, bad.length, h.errors.join("; "));
  assert.match(h.errors.join("\n"), /unexpected member "extra"/);
  await h.end();
  await h.transport.ended;
});

Deno.test("stdio transport: the envelope check agrees with the SDK's schema on these messages", () => {
  const valid = [
    { jsonrpc: "2.0", id: "a", method: "tools/call", params: { name: "x" } },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 3, result: {} },
    { jsonrpc: "2.0", id: 3, error: { code: -32601, message: "nope" } },
    { jsonrpc: "2.0", error: { code: -32700, message: "parse", data: 1 } },
    {
      jsonrpc: "2.0",
      id: 1,
      method: "m",
      params: { _meta: { progressToken: 2 } },
    },
    { jsonrpc: "2.0", method: "m", params: { _meta: { other: [1] } } },
    { jsonrpc: "2.0", id: 1, result: { _meta: { progressToken: "p" } } },
  ];
  // What the SDK's zod parse rejects beyond the envelope: ids and codes past
  // safe integers, a `_meta` of the wrong shape.
  const rejected = [
    { jsonrpc: "2.0", id: 1e20, method: "ping" },
    { jsonrpc: "2.0", id: 1, error: { code: 2 ** 60, message: "big" } },
    { jsonrpc: "2.0", id: 1, method: "m", params: { _meta: 5 } },
    {
      jsonrpc: "2.0",
      id: 1,
      method: "m",
      params: { _meta: { progressToken: true } },
    },
    { jsonrpc: "2.0", method: "m", params: { _meta: { progressToken: 1.5 } } },
    {
      jsonrpc: "2.0",
      id: 1,
      method: "m",
      params: { _meta: { "io.modelcontextprotocol/related-task": 1 } },
    },
    { jsonrpc: "2.0", id: 1, result: { _meta: null } },
  ];
  for (const value of rejected) {
    assert.notEqual(envelopeProblem(value), undefined, JSON.stringify(value));
    assert.equal(JSONRPCMessageSchema.safeParse(value).success, false);
  }
  for (const message of valid) {
    assert.equal(envelopeProblem(message), undefined, JSON.stringify(message));
    assert.ok(JSONRPCMessageSchema.safeParse(message).success);
  }
  for (const line of BAD_LINES) {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    assert.notEqual(envelopeProblem(value), undefined, line);
    assert.equal(JSONRPCMessageSchema.safeParse(value).success, false, line);
  }
});

Deno.test("stdio transport: a line over the limit is skipped with an error, the server goes on", async () => {
  const h = harness(1000);
  await h.transport.start();
  const huge = JSON.stringify({
    ...ping(1),
    params: { pad: "x".repeat(5000) },
  });
  await h.send(huge.slice(0, 3000));
  await h.send(huge.slice(3000) + "\n" + JSON.stringify(ping(2)) + "\n");
  await waitFor(() => h.messages.length, (n) => n === 1);
  assert.deepEqual(h.messages, [ping(2)]);
  assert.equal(h.errors.length, 1);
  assert.match(h.errors[0] ?? "", /longer than the limit/);
  await h.end();
});

Deno.test("stdio transport: answers keep their order, one write per turn; drain waits for them", async () => {
  const h = harness();
  await h.transport.start();
  const sends = [1, 2, 3].map((id) =>
    h.transport.send({ jsonrpc: "2.0", id, result: { n: id } })
  );
  await h.transport.drain();
  assert.deepEqual(h.written.length, 1);
  assert.deepEqual(
    h.lines(),
    [1, 2, 3].map((id) => ({
      jsonrpc: "2.0",
      id,
      result: { n: id },
    })),
  );
  await Promise.all(sends);
  await h.transport.close();
  await h.transport.close();
  assert.equal(h.closes(), 1, "onclose once");
});

Deno.test("stdio transport: close() ends reading, calls onclose and resolves ended", async () => {
  const h = harness();
  await h.transport.start();
  await assert.rejects(h.transport.start(), /already started/);
  await h.transport.close();
  await h.transport.ended;
  assert.equal(h.closes(), 1);
});

Deno.test("stdio transport: an SDK server answers over it; a malformed line between requests harms nothing", async () => {
  const h = harness();
  const server = new Server({ name: "t", version: "1.0.0" }, {
    capabilities: {},
  });
  let serverErrors = 0;
  server.onerror = () => serverErrors++;
  h.transport.onmessage = undefined;
  await server.connect(h.transport);
  await h.send(
    JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: "test", version: "1" },
      },
    }) + "\n{oops\n" +
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) +
      "\n" + JSON.stringify(ping(2)) + "\n" + JSON.stringify(ping(3)),
  );
  await h.end();
  await h.transport.ended;
  await waitFor(() => h.lines().length, (n) => n === 3);
  await h.transport.drain();
  const lines = h.lines();
  assert.deepEqual(
    lines.map((line) =>
      typeof line === "object" && line !== null && "id" in line
        ? line.id
        : undefined
    ),
    [1, 2, 3],
  );
  assert.deepEqual(lines[1], { jsonrpc: "2.0", id: 2, result: {} });
  assert.equal(serverErrors, 1, "the malformed line reached onerror once");
  await server.close();
});

Deno.test("stdio transport: a write that fails (the client closed stdout) is reported once and closes it", async () => {
  const pipe = new TransformStream<Uint8Array, Uint8Array>();
  const transport = new DenoStdioTransport({
    input: pipe.readable,
    output: { write: () => Promise.reject(new Error("Broken pipe")) },
  });
  const errors: string[] = [];
  let closes = 0;
  transport.onerror = (error) => errors.push(error.message);
  transport.onclose = () => closes++;
  await transport.start();
  const sent = [
    transport.send({ jsonrpc: "2.0", id: 1, result: {} }),
    transport.send({ jsonrpc: "2.0", id: 2, result: {} }),
  ];
  for (const result of await Promise.allSettled(sent)) {
    assert.equal(result.status, "rejected");
  }
  await transport.ended;
  assert.deepEqual(errors, ["Writing to stdout failed, closing: Broken pipe"]);
  assert.equal(closes, 1);
  await assert.rejects(
    transport.send({ jsonrpc: "2.0", id: 3, result: {} }),
    /Broken pipe/,
  );
  assert.equal(closes, 1);
});
