// Every request a session POST carries ends its wait (tools/kit/transport/http_session.ts):
// messages the SDK would drop unanswered are refused, ids are not shared,
// cancelled and abandoned requests end their POST and leave the session idle,
// a slow call switches to a stream after 1 s, a failing event store is
// reported instead of killing the process. In process, through McpHttpEndpoint.

import assert from "node:assert/strict";
import { z } from "zod";
import type { EventStore } from "../../platform/mcp_sdk.ts";
import { defineServer, text, toolDefiner } from "../../tools/kit/mod.ts";
import { createSdkServer } from "../../tools/kit/transport/sdk_server.ts";
import { SessionHttpTransport } from "../../tools/kit/transport/http_session.ts";
import { INITIALIZE_REQUEST, waitFor } from "../helpers.ts";
import { ACCEPT, call, httpSession, startHost } from "./http_session.ts";

const tool = toolDefiner<Record<never, never>>();

/** What the `wait` tool waits for (or its call's abort); a test resolves it. */
let held = Promise.withResolvers<void>();

const waiting = defineServer<Record<never, never>>({
  id: "waiting",
  namespace: "svc-waiting",
  title: "Waiting",
  version: "1.0.0",
  tools: [
    tool({
      name: "quick",
      description: "Answers at once",
      input: z.object({}),
      handle: () => Promise.resolve(text("quick")),
    }),
    tool({
      name: "wait",
      description: "Answers once the test releases it or the call is cancelled",
      input: z.object({}),
      async handle(_ctx, _args, call) {
        await new Promise<void>((resolve) => {
          call.signal.addEventListener("abort", () => resolve());
          held.promise.then(resolve);
        });
        return text("released");
      },
    }),
  ],
  start: () => Promise.resolve({ context: {} }),
});

async function session() {
  held = Promise.withResolvers<void>();
  const opened = await httpSession(waiting);
  const close = opened[Symbol.asyncDispose];
  return {
    ...opened,
    async [Symbol.asyncDispose]() {
      held.resolve();
      await close();
    },
  };
}

function cancel(requestId: number) {
  return {
    jsonrpc: "2.0",
    method: "notifications/cancelled",
    params: { requestId, reason: "timed out" },
  };
}

/** Fails instead of hanging when a response never ends (the bug these tests pin). */
async function ended<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} never ended`)), 10_000);
  });
  try {
    return await Promise.race([promise, guard]);
  } finally {
    clearTimeout(timer);
  }
}

/** The data of an SSE body's events with an id (undefined for a priming event). */
async function eventsOf(response: Response) {
  const body = await ended(response.text(), "the SSE stream");
  return body.split("\n\n").filter((block) => block.includes("id: ")).map(
    (block) => {
      const data = block.split("\n").find((line) => line.startsWith("data: "))
        ?.slice(6).trim();
      return data ? JSON.parse(data) : undefined;
    },
  );
}

Deno.test("http answer ends: messages the SDK's parser rejects get 400 -32700, the session stays idle", async () => {
  await using s = await session();
  const bad: unknown[] = [
    call(2, "quick", 5),
    call(3, "quick", { progressToken: true }),
    call(4, "quick", { progressToken: 1.5 }),
    call(5, "quick", { "io.modelcontextprotocol/related-task": 1 }),
    call(1e20, "quick"),
    // Notifications and responses only: the SDK refused these too.
    {
      jsonrpc: "2.0",
      method: "notifications/initialized",
      params: { _meta: 5 },
    },
    { jsonrpc: "2.0", id: 6, result: { _meta: { progressToken: false } } },
    { jsonrpc: "2.0", id: 7, error: { code: 2 ** 60, message: "big" } },
    [call(8, "quick"), call(9, "quick", null)],
  ];
  for (const message of bad) {
    const response = await s.inSession(message);
    const what = JSON.stringify(message);
    assert.equal(response.status, 400, what);
    const error = await response.json();
    assert.equal(error.error.code, -32700, what);
    assert.equal(await s.idle(), true, `busy after ${what}`);
  }
  // The same shapes with values the SDK takes are answered.
  const good = await s.inSession([
    call(10, "quick", { progressToken: 7, other: true }),
    call(11, "quick", {
      "io.modelcontextprotocol/related-task": { taskId: "t" },
    }),
  ]);
  assert.equal(good.headers.get("content-type"), "text/event-stream");
  const ids = (await eventsOf(good)).flatMap((event) => event?.id ?? []);
  assert.deepEqual(ids.sort(), [10, 11]);
  assert.equal(await s.idle(), true);
});

Deno.test("http answer ends: a request id used twice is refused with -32600", async () => {
  await using s = await session();
  const twice = await s.inSession([call(2, "quick"), call(2, "quick")]);
  assert.equal(twice.status, 400);
  assert.equal((await twice.json()).error.code, -32600);
  // An id still open in another POST is refused too; the open one still answers.
  const open = s.inSession(call(3, "wait"));
  await s.busy();
  const again = await s.inSession(call(3, "quick"));
  assert.equal(again.status, 400);
  assert.equal((await again.json()).error.code, -32600);
  held.resolve();
  const answer = await ended(open, "the first request");
  const events = answer.headers.get("content-type") === "application/json"
    ? [await answer.json()]
    : await eventsOf(answer);
  assert.equal(events.at(-1).result.content[0].text, "released");
  assert.equal(await s.idle(), true);
});

Deno.test("http answer ends: a cancelled request ends its POST and leaves the session idle", async () => {
  await using s = await session();
  // Waiting for a JSON answer: the POST ends with an empty stream (no response, as the spec says).
  const waiting = s.inSession(call(2, "wait"));
  await s.busy();
  const cancelled = await s.inSession(cancel(2));
  assert.equal(cancelled.status, 202);
  const first = await ended(waiting, "the cancelled POST");
  assert.equal(first.status, 200);
  assert.equal(first.headers.get("content-type"), "text/event-stream");
  assert.equal(await ended(first.text(), "the cancelled POST's body"), "");
  assert.equal(await s.idle(), true);
  // Streaming (progress token): the stream ends after its priming event.
  const streaming = await s.inSession(call(3, "wait", { progressToken: "p" }));
  assert.equal(streaming.headers.get("content-type"), "text/event-stream");
  await (await s.inSession(cancel(3))).body?.cancel();
  assert.deepEqual(await eventsOf(streaming), [undefined]);
  assert.equal(await s.idle(), true);
  // In a batch, the answered requests still get their answers.
  const batch = s.inSession([call(4, "quick"), call(5, "wait")]);
  await s.busy();
  await (await s.inSession(cancel(5))).body?.cancel();
  const answers = await (await ended(batch, "the batch")).json();
  assert.equal(answers.id, 4);
  assert.equal(await s.idle(), true);
});

Deno.test("http answer ends: a client gone before its JSON answer frees the session (at the 1 s mark)", async () => {
  await using s = await session();
  const client = new AbortController();
  const waiting = s.inSession(call(2, "wait"), { signal: client.signal });
  await s.busy();
  client.abort();
  await ended(waiting, "the abandoned POST");
  assert.equal(await s.idle(), true);
  // The call's late answer has no one to go to and is dropped quietly.
  held.resolve();
  const next = await s.inSession(call(3, "quick"));
  assert.equal((await next.json()).id, 3);
});

Deno.test("http answer ends: a call past 1 s switches to a stream, priming event first", async () => {
  await using s = await session();
  // Resolves when the 1 s timer switches the answer to a stream.
  const response = await s.inSession(call(2, "wait"));
  assert.equal(response.headers.get("content-type"), "text/event-stream");
  held.resolve();
  const events = await eventsOf(response);
  assert.equal(events[0], undefined, "priming event (id, no data)");
  assert.equal(events[1].id, 2);
  assert.equal(events[1].result.content[0].text, "released");
  assert.equal(await s.idle(), true);
});

Deno.test("http answer ends: DELETE while a JSON answer is pending ends that POST with 404 -32001", async () => {
  await using s = await session();
  const waiting = s.inSession(call(2, "wait"));
  await s.busy();
  const removed = await s.remove();
  assert.equal(removed.status, 200);
  await removed.body?.cancel();
  const answer = await ended(waiting, "the POST of a deleted session");
  assert.equal(answer.status, 404);
  assert.equal((await answer.json()).error.code, -32001);
  assert.equal(await s.idle(), true);
});

Deno.test("http answer ends: a failing event store is logged, its stream closed, nothing left unhandled", async () => {
  held = Promise.withResolvers<void>();
  const { host, log, logs } = await startHost(waiting);
  const failing: EventStore = {
    storeEvent: () => Promise.reject(new Error("disk full")),
    replayEventsAfter: () => Promise.reject(new Error("disk full")),
  };
  const answered: unknown[] = [];
  const transport = new SessionHttpTransport({
    eventStore: failing,
    log,
    streamAfterMs: 0,
    onsessioninitialized: () => {},
    onsessionclosed: () => {},
  });
  transport.onanswered = (id) => answered.push(id);
  const server = createSdkServer(host, {});
  await server.connect(transport);
  try {
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      transport.handleRequest(
        new Request("http://127.0.0.1/mcp", {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: ACCEPT,
            ...headers,
          },
          body: JSON.stringify(body),
        }),
      );
    const init = await post(INITIALIZE_REQUEST);
    assert.equal(init.status, 200);
    await init.text();
    const headers = {
      "mcp-session-id": transport.sessionId ?? "",
      "mcp-protocol-version": "2025-11-25",
    };
    // The switch to a stream fails to store its priming event.
    const response = await ended(post(call(2, "wait"), headers), "the POST");
    assert.equal(response.headers.get("content-type"), "text/event-stream");
    assert.equal(await ended(response.text(), "the broken stream"), "");
    assert.ok(logs.some((line) => line.event === "mcp_event_store_failed"));
    held.resolve();
    // The call's answer can not be stored either: its wait still ends.
    await waitFor(() => answered, (ids) => ids.includes(2));
  } finally {
    await server.close();
    await host.stop(1000);
  }
});
