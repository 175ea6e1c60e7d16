// How a session's POST is answered (tools/kit/transport/http_session.ts): one JSON
// body for calls that send nothing before their response, an SSE stream for
// calls that ask for progress or send notifications mid-call, and JSON-RPC
// errors with the SDK transport's statuses for bad envelopes. In process,
// through McpHttpEndpoint, as the daemon mounts it.

import assert from "node:assert/strict";
import { z } from "zod";
import { defineServer, text, toolDefiner } from "../../tools/kit/mod.ts";
import { INITIALIZE_REQUEST } from "../helpers.ts";
import { call, httpSession } from "./http_session.ts";

const tool = toolDefiner<Record<never, never>>();

const chatty = defineServer<Record<never, never>>({
  id: "chatty",
  namespace: "svc-chatty",
  title: "Chatty",
  version: "1.0.0",
  tools: [
    tool({
      name: "quick",
      description: "Answers at once",
      input: z.object({}),
      handle: () => Promise.resolve(text("quick")),
    }),
    tool({
      name: "steps",
      description: "Reports progress and logs, then answers",
      input: z.object({}),
      async handle(_ctx, _args, call) {
        await call.progress(1, 2, "half");
        await call.log("info", { step: "one" });
        return text("done");
      },
    }),
  ],
  start: () => Promise.resolve({ context: {} }),
});

const session = () => httpSession(chatty);

/** The events of an SSE body: id and parsed data (undefined for a priming event). */
async function eventsOf(response: Response) {
  const text = await response.text();
  return text.split("\n\n").filter((block) => block.includes("id: ")).map(
    (block) => {
      const data = block.split("\n").find((line) => line.startsWith("data: "))
        ?.slice(6).trim();
      return {
        id: block.match(/^id: (.+)$/m)?.[1],
        message: data ? JSON.parse(data) : undefined,
      };
    },
  );
}

Deno.test("http answers: a call that sends nothing before its result gets one JSON body", async () => {
  await using s = await session();
  const response = await s.inSession(call(2, "quick"));
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "application/json");
  assert.equal(response.headers.get("mcp-session-id"), s.id);
  const body = await response.json();
  assert.equal(body.id, 2);
  assert.deepEqual(body.result.content, [{ type: "text", text: "quick" }]);
  // A batch gets its answers as one array, in the order asked.
  const batch = await s.inSession([
    call(3, "quick"),
    { jsonrpc: "2.0", id: 4, method: "tools/list" },
  ]);
  assert.equal(batch.headers.get("content-type"), "application/json");
  const answers = await batch.json();
  assert.deepEqual(answers.map((answer: { id: number }) => answer.id), [3, 4]);
});

Deno.test("http answers: a call with a progress token streams, priming event first", async () => {
  await using s = await session();
  const response = await s.inSession(call(5, "steps", { progressToken: "p" }));
  assert.equal(response.headers.get("content-type"), "text/event-stream");
  const events = await eventsOf(response);
  assert.equal(events[0].message, undefined, "priming event (id, no data)");
  assert.ok(events[0].id);
  assert.deepEqual(
    events.slice(1).map((event) => event.message.method ?? event.message.id),
    ["notifications/progress", "notifications/message", 5],
  );
});

Deno.test("http answers: a call that logs mid-call without a progress token switches to a stream", async () => {
  await using s = await session();
  const response = await s.inSession(call(6, "steps"));
  assert.equal(response.headers.get("content-type"), "text/event-stream");
  const events = await eventsOf(response);
  assert.equal(events[0].message, undefined, "priming event (id, no data)");
  // No progress token: no progress notification, the log and the result.
  assert.deepEqual(
    events.slice(1).map((event) => event.message.method ?? event.message.id),
    ["notifications/message", 6],
  );
  assert.equal(events[2].message.result.content[0].text, "done");
});

Deno.test("http answers: bad envelopes get JSON-RPC errors with the SDK's statuses", async () => {
  await using s = await session();
  const cases: [string, number, number][] = [
    ["{not json", 400, -32700],
    [JSON.stringify({ jsonrpc: "2.0", id: 1, method: 7 }), 400, -32700],
    [JSON.stringify({ jsonrpc: "1.0", id: 1, method: "ping" }), 400, -32700],
    [
      JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", extra: 1 }),
      400,
      -32700,
    ],
    [
      JSON.stringify({ jsonrpc: "2.0", id: { a: 1 }, method: "ping" }),
      400,
      -32700,
    ],
    [
      JSON.stringify(
        Array.from({ length: 101 }, (_, i) => ({
          jsonrpc: "2.0",
          id: i,
          method: "ping",
        })),
      ),
      400,
      -32600,
    ],
    [JSON.stringify(INITIALIZE_REQUEST), 400, -32600],
  ];
  for (const [body, status, code] of cases) {
    const response = await s.inSession(body);
    assert.equal(response.status, status, body.slice(0, 80));
    const error = await response.json();
    assert.equal(error.error.code, code, body.slice(0, 80));
    assert.equal(error.id, null);
  }
  const oldVersion = await s.inSession(call(8, "quick"), {
    headers: {
      "mcp-protocol-version": "1999-01-01",
    },
  });
  assert.equal(oldVersion.status, 400);
  assert.match((await oldVersion.json()).error.message, /protocol version/);
  const notJson = await s.inSession(call(9, "quick"), {
    headers: {
      "content-type": "text/plain",
    },
  });
  assert.equal(notJson.status, 415);
  await notJson.body?.cancel();
  const sseOnly = await s.inSession(call(10, "quick"), {
    headers: {
      accept: "text/event-stream",
    },
  });
  assert.equal(sseOnly.status, 406);
  await sseOnly.body?.cancel();
  // The session still works after every refusal.
  assert.equal((await (await s.inSession(call(11, "quick"))).json()).id, 11);
});
