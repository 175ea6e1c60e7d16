// A session's requests keep their own identity (tools/kit/transport/http_requests.ts):
// a client reusing the id of a request it abandoned gets its new call's answer,
// never the old call's late one; and what the SDK reports on a session
// (server.onerror) is logged once, without the message that caused it.
// In process, through McpHttpEndpoint.

import assert from "node:assert/strict";
import { z } from "zod";
import { defineServer, text, toolDefiner } from "../../tools/kit/mod.ts";
import { INITIALIZE_REQUEST, waitFor } from "../helpers.ts";
import { SessionRequests } from "../../tools/kit/transport/http_requests.ts";
import { ACCEPT, call, httpSession } from "./http_session.ts";

const tool = toolDefiner<Record<never, never>>();

/** What `slow` waits for: it ignores cancellation, as a call stuck in I/O would. */
let slowHeld = Promise.withResolvers<void>();
/** Calls of `slow` that have returned. */
let slowEnded = 0;
/** What `second` waits for, so it is still open when the old call answers. */
let secondHeld = Promise.withResolvers<void>();
/** What `abortable` waits for, unless its call is aborted first. */
let abortableHeld = Promise.withResolvers<void>();
/** The calls of `abortable` started, and those aborted (by their `tag`). */
const started: string[] = [];
const aborted: string[] = [];

const ids = defineServer<Record<never, never>>({
  id: "ids",
  namespace: "svc-ids",
  title: "Ids",
  version: "1.0.0",
  tools: [
    tool({
      name: "slow",
      description: "Answers once the test releases it",
      input: z.object({}),
      async handle() {
        await slowHeld.promise;
        slowEnded++;
        return text("slow");
      },
    }),
    tool({
      name: "second",
      description: "Answers once the test releases it",
      input: z.object({}),
      async handle() {
        await secondHeld.promise;
        return text("second");
      },
    }),
    tool({
      name: "quick",
      description: "Answers at once",
      input: z.object({}),
      handle: () => Promise.resolve(text("quick")),
    }),
    tool({
      name: "abortable",
      description: "Answers once released or aborted",
      input: z.object({ tag: z.string().optional() }),
      async handle(_context, args, call) {
        const tag = args.tag ?? "abortable";
        started.push(tag);
        const abort = Promise.withResolvers<void>();
        call.signal.addEventListener("abort", () => {
          aborted.push(tag);
          abort.resolve();
        }, { once: true });
        await Promise.race([abort.promise, abortableHeld.promise]);
        return text(tag);
      },
    }),
  ],
  start: () => Promise.resolve({ context: {} }),
});

async function session() {
  slowHeld = Promise.withResolvers<void>();
  secondHeld = Promise.withResolvers<void>();
  abortableHeld = Promise.withResolvers<void>();
  started.length = 0;
  aborted.length = 0;
  slowEnded = 0;
  const opened = await httpSession(ids, "debug");
  const close = opened[Symbol.asyncDispose];
  return {
    ...opened,
    async [Symbol.asyncDispose]() {
      slowHeld.resolve();
      secondHeld.resolve();
      abortableHeld.resolve();
      await close();
    },
  };
}

Deno.test("http request ids: an abandoned call's late answer does not answer a new request of the same id", async () => {
  await using s = await session();
  const client = new AbortController();
  const abandoned = s.inSession(call(2, "slow"), { signal: client.signal });
  await s.busy();
  client.abort();
  // The POST ends at the 1 s mark, when the transport sees its client gone.
  await abandoned;
  assert.equal(await s.idle(), true);
  // The same id again, while the old call still runs.
  const response = await reuseWhileRunning(s, 2, 1);
  assert.equal(response.headers.get("content-type"), "application/json");
  await ownAnswer(s, response, 2, "second");
});

/** A response to nothing the server asked: the SDK's Protocol reports it to server.onerror. */
const stray = (id: number) => ({
  jsonrpc: "2.0",
  id,
  result: { password: "hunter2-stray" },
});

/** The one `event` line logged for a stray response: a warning, without the body. */
async function strayLogged(
  s: Awaited<ReturnType<typeof session>>,
  response: Response,
  event: string,
) {
  assert.equal(response.status, 202);
  const errors = await waitFor(
    () => s.logs.filter((line) => line.event === event),
    (lines) => lines.length > 0,
  );
  assert.equal(errors.length, 1, JSON.stringify(errors));
  assert.equal(errors[0].level, "warn");
  assert.equal(errors[0].server, "ids");
  assert.match(JSON.stringify(errors[0].error), /unknown message ID/);
  assert.ok(!JSON.stringify(s.logs).includes("hunter2"), "no body in logs");
  return errors[0];
}

Deno.test("http request ids: what the SDK reports on a session is logged once, without the message's body", async () => {
  await using s = await session();
  const error = await strayLogged(
    s,
    await s.inSession(stray(99)),
    "mcp_session_error",
  );
  assert.equal(error.session, s.id);
  // A refused POST is reported once too (the transport's refusals reach onerror).
  const refused = await s.inSession("{}", {
    headers: { "content-type": "text/plain" },
  });
  assert.equal(refused.status, 415);
  await refused.body?.cancel();
  const after = s.logs.filter((line) => line.event === "mcp_session_error");
  assert.equal(after.length, 2, JSON.stringify(after));
  assert.match(JSON.stringify(after[1].error), /Unsupported Media Type/);
});

Deno.test("http request ids: what the SDK reports on a stateless POST is logged, without the message's body", async () => {
  await using s = await session();
  const response = await s.endpoint.handle(
    new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", accept: ACCEPT },
      body: JSON.stringify(stray(98)),
    }),
  );
  await strayLogged(s, response, "mcp_stateless_error");
});

const cancel = (requestId: unknown) => ({
  jsonrpc: "2.0",
  method: "notifications/cancelled",
  params: { requestId },
});

/** Call 2 (`slow`, deaf to cancellation) cancelled: the server still runs it. */
async function cancelSlow(s: Awaited<ReturnType<typeof session>>, id: number) {
  const first = s.inSession(call(id, "slow"));
  await s.busy();
  const cancelled = await s.inSession(cancel(id));
  assert.equal(cancelled.status, 202);
  await (await first).body?.cancel();
}

Deno.test("http request ids: a reused id in a batch gets its own answer beside the batch's other ids", async () => {
  await using s = await session();
  await cancelSlow(s, 2);
  // 2 is held for the cancelled call: the new 2 gets a server id of its own
  // (with a random per-session prefix no client id can equal; "2~1" was its
  // form once), and the answers go back under the client's ids.
  const response = await s.inSession([
    call(2, "quick"),
    { jsonrpc: "2.0", id: "2~1", method: "ping" },
  ]);
  assert.equal(response.headers.get("content-type"), "application/json");
  const answers = await response.json();
  assert.deepEqual(answers, [
    {
      jsonrpc: "2.0",
      id: 2,
      result: { content: [{ type: "text", text: "quick" }] },
    },
    { jsonrpc: "2.0", id: "2~1", result: {} },
  ]);
  assert.equal(await s.idle(), true);
});

Deno.test("http request ids: a cancellation naming no open request aborts no other one", async () => {
  await using s = await session();
  await cancelSlow(s, 5);
  let settled = false;
  const reused = s.inSession({
    jsonrpc: "2.0",
    id: 5,
    method: "tools/call",
    params: { name: "abortable", arguments: { tag: "five" } },
  }).finally(() => settled = true);
  await waitFor(() => started.includes("five"), (done) => done);
  // Ids not open (the form the server's ids had once, and another): the
  // server's own ids now carry a random prefix, unknown to clients (the unit
  // test below checks that they are told apart).
  for (const id of ["5~1", "5~2", 6]) {
    assert.equal((await s.inSession(cancel(id))).status, 202);
  }
  // A request after them: by its answer, the server has seen the cancellations.
  const ping = await s.inSession({ jsonrpc: "2.0", id: 7, method: "ping" });
  assert.deepEqual((await ping.json()).result, {});
  assert.deepEqual(aborted, []);
  assert.equal(settled, false);
  abortableHeld.resolve();
  const answer = await (await reused).json();
  assert.equal(answer.id, 5);
  assert.deepEqual(answer.result.content, [{ type: "text", text: "five" }]);
  assert.equal(await s.idle(), true);
});

Deno.test("http request ids: cancelled requests do not push out the id of an abandoned call still running", async () => {
  await using s = await session();
  const client = new AbortController();
  const abandoned = s.inSession(call(1, "slow"), { signal: client.signal });
  await s.busy();
  client.abort();
  await abandoned;
  assert.equal(await s.idle(), true);
  // More cancelled requests than the session holds ids of gone ones (1,024).
  for (let i = 0; i < 1100; i++) {
    const id = 1000 + i;
    const response = await s.inSession([call(id, "abortable"), cancel(id)]);
    await response.body?.cancel();
  }
  assert.equal(await s.idle(), true);
  await ownAnswer(s, await reuseWhileRunning(s, 1, 1), 1, "second");
});

Deno.test("http request ids: a request id longer than 1,024 characters is refused", async () => {
  await using s = await session();
  const refused = await s.inSession([
    call(1, "quick"),
    call("x".repeat(1025), "quick"),
  ]);
  assert.equal(refused.status, 400);
  const error = await refused.json();
  assert.equal(error.error.code, -32600);
  assert.match(error.error.message, /longer than 1024 characters/);
  assert.equal(await s.idle(), true);
  // At the limit, it is accepted.
  const id = "y".repeat(1024);
  const answer = await (await s.inSession(call(id, "quick"))).json();
  assert.equal(answer.id, id);
  assert.deepEqual(answer.result.content, [{ type: "text", text: "quick" }]);
});

/**
 * `second` under `id` while the old `slow` calls still run; then they answer:
 * their `late` answers are dropped (logged at debug), or, wrongly, one of them
 * answers the new POST. Its response.
 */
async function reuseWhileRunning(
  s: Awaited<ReturnType<typeof session>>,
  id: number,
  late: number,
): Promise<Response> {
  let settled = false;
  const reused = s.inSession(call(id, "second")).finally(() => settled = true);
  await s.busy();
  slowHeld.resolve();
  await waitFor(
    () =>
      settled ||
      s.logs.filter((line) => line.event === "mcp_late_message_dropped")
          .length === late,
    (done) => done,
  );
  secondHeld.resolve();
  return await reused;
}

/** `response` answers request `id` with `text`, and the session is left quiet and without errors. */
async function ownAnswer(
  s: Awaited<ReturnType<typeof session>>,
  response: Response,
  id: number,
  text: string,
) {
  const answer = await response.json();
  assert.equal(answer.id, id);
  assert.deepEqual(answer.result.content, [{ type: "text", text }]);
  assert.equal(await s.idle(), true);
  assert.deepEqual(
    s.logs.filter((line) => line.event === "mcp_session_error"),
    [],
  );
}

/** POSTs `body`, then leaves it: the POST ends when the transport sees its client gone (1 s). */
async function leave(s: Awaited<ReturnType<typeof session>>, body: unknown) {
  const client = new AbortController();
  const left = s.inSession(body, { signal: client.signal });
  await s.busy();
  client.abort();
  await left;
}

Deno.test("http request ids: past the cap of abandoned calls, a reused id still gets its own answer", async () => {
  await using s = await session();
  await leave(s, call(1, "slow"));
  // More abandoned calls, all still running, than the session holds ids of (1,024).
  await Promise.all(
    Array.from(
      { length: 11 },
      (_, batch) =>
        leave(
          s,
          Array.from(
            { length: 100 },
            (_, i) => call(1000 + batch * 100 + i, "slow"),
          ),
        ),
    ),
  );
  assert.equal(await s.idle(), true);
  // All 1,101 late answers dropped, or, wrongly, the first one answers the new 1.
  await ownAnswer(s, await reuseWhileRunning(s, 1, 1101), 1, "second");
});

Deno.test("http request ids: a cancellation of an id left twice reaches the latest call first", async () => {
  await using s = await session();
  const abortable = (tag: string) => ({
    jsonrpc: "2.0",
    id: 3,
    method: "tools/call",
    params: { name: "abortable", arguments: { tag } },
  });
  await leave(s, abortable("older"));
  await leave(s, abortable("newer"));
  await waitFor(() => started.length, (count) => count === 2);
  assert.deepEqual(started, ["older", "newer"]);
  /** Cancels 3; by the answer to the ping after it, the server has seen it. */
  const cancelThree = async (ping: number) => {
    assert.equal((await s.inSession(cancel(3))).status, 202);
    const answer = await s.inSession({
      jsonrpc: "2.0",
      id: ping,
      method: "ping",
    });
    assert.deepEqual((await answer.json()).result, {});
  };
  await cancelThree(4);
  await waitFor(() => aborted.length, (count) => count > 0);
  assert.deepEqual(aborted, ["newer"]);
  await cancelThree(5);
  await waitFor(() => aborted.length, (count) => count > 1);
  assert.deepEqual(aborted, ["newer", "older"]);
  // Their answers are dropped: a new 3 gets its own.
  await ownAnswer(s, await s.inSession(call(3, "quick")), 3, "quick");
});

Deno.test('http request ids: a request of id 0 or "" can be cancelled (the SDK ignores a falsy requestId)', async () => {
  await using s = await session();
  for (const [id, tag] of [[0, "zero"], ["", "empty"]] as const) {
    const first = s.inSession({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "abortable", arguments: { tag } },
    });
    await waitFor(() => started.includes(tag), (done) => done);
    assert.equal((await s.inSession(cancel(id))).status, 202);
    await waitFor(() => aborted.includes(tag), (done) => done);
    await (await first).body?.cancel();
  }
  assert.deepEqual(aborted, ["zero", "empty"]);
  assert.equal(await s.idle(), true);
});

Deno.test("http request ids: a cancelled call of id 0 never answers a later request 0", async () => {
  await using s = await session();
  const first = s.inSession(call(0, "slow"));
  await s.busy();
  assert.equal((await s.inSession(cancel(0))).status, 202);
  await (await first).body?.cancel();
  // More cancelled calls than the session holds ids of: 0's is let go.
  for (let i = 0; i < 1100; i++) {
    const id = 1000 + i;
    const response = await s.inSession([call(id, "abortable"), cancel(id)]);
    await response.body?.cancel();
  }
  assert.equal(await s.idle(), true);
  let settled = false;
  const reused = s.inSession(call(0, "second")).finally(() => settled = true);
  await s.busy();
  slowHeld.resolve();
  await waitFor(() => slowEnded, (ended) => ended === 1);
  // By a ping's answer, the old call's answer, if sent, has reached the session.
  const ping = await s.inSession({ jsonrpc: "2.0", id: 7, method: "ping" });
  assert.deepEqual((await ping.json()).result, {});
  assert.equal(settled, false, "the old call answered the new request 0");
  secondHeld.resolve();
  await ownAnswer(s, await reused, 0, "second");
});

Deno.test("http request ids: a stateless POST of a call and its cancellation ends with the call's answer", async () => {
  await using s = await session();
  let settled = false;
  const response = s.endpoint.handle(
    new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", accept: ACCEPT },
      body: JSON.stringify([
        {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "abortable", arguments: { tag: "stateless" } },
        },
        cancel(1),
      ]),
    }),
  ).finally(() => settled = true);
  await waitFor(() => started.includes("stateless"), (done) => done);
  abortableHeld.resolve();
  await waitFor(() => settled, (done) => done);
  const answers = await (await response).json();
  assert.deepEqual(answers, {
    jsonrpc: "2.0",
    id: 1,
    result: { content: [{ type: "text", text: "stateless" }] },
  });
});

Deno.test("http request ids: a stateless body the SDK refuses is refused the same with a cancellation in it", async () => {
  await using s = await session();
  const stateless = (body: unknown) =>
    s.endpoint.handle(
      new Request("http://127.0.0.1/mcp", {
        method: "POST",
        headers: { "content-type": "application/json", accept: ACCEPT },
        body: JSON.stringify(body),
      }),
    );
  const refused: [unknown, number, RegExp][] = [
    // A malformed cancellation beside a call.
    [
      [call(1, "quick"), {
        jsonrpc: "1.0",
        method: "notifications/cancelled",
        params: { requestId: 1 },
      }],
      -32700,
      /Invalid JSON-RPC message/,
    ],
    // An initialize in a batch.
    [[INITIALIZE_REQUEST, cancel(1)], -32600, /Only one initialization/],
    // Over 100 messages, cancellations included.
    [
      [
        ...Array.from(
          { length: 99 },
          (_, i) => ({ jsonrpc: "2.0", id: i + 1, method: "ping" }),
        ),
        cancel(1),
        cancel(2),
      ],
      -32600,
      /Batch/,
    ],
  ];
  for (const [body, code, message] of refused) {
    const response = await stateless(body);
    assert.equal(response.status, 400);
    const { error } = await response.json();
    assert.equal(error.code, code);
    assert.match(error.message, message);
  }
});

Deno.test("http request ids: an initialize with an id over the limit opens no session", async () => {
  await using s = await session();
  assert.equal(s.endpoint.sessionCount, 1);
  const refused = await s.endpoint.handle(
    new Request("http://127.0.0.1/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", accept: ACCEPT },
      body: JSON.stringify({ ...INITIALIZE_REQUEST, id: "i".repeat(1025) }),
    }),
  );
  assert.equal(refused.status, 400);
  assert.equal(refused.headers.get("mcp-session-id"), null);
  assert.match((await refused.json()).error.message, /longer than 1024/);
  assert.equal(s.endpoint.sessionCount, 1);
});

Deno.test("http request ids: once gone ids were let go, every new request gets a server id of its own", () => {
  const requests = new SessionRequests();
  for (let id = 1; id <= 1025; id++) {
    assert.equal(requests.accept(id), id);
    requests.abandon(id);
    requests.close(id);
  }
  // Id 1 was let go (its call may still run): neither it nor a new id is used as it is.
  for (const id of [1, 1025, 5000]) {
    const serverId = requests.accept(id);
    assert.notEqual(serverId, id);
    assert.equal(requests.isRenamed(serverId), true);
  }
  // A late message of the id let go is taken for one, not for an error.
  assert.equal(requests.isGone(1, true), true);
});

Deno.test("http request ids: cancelled calls, which send nothing more, never make a session rename every request", () => {
  const requests = new SessionRequests();
  for (let id = 1; id <= 1101; id++) {
    assert.equal(requests.accept(id), id);
    requests.cancel(id);
    requests.close(id);
  }
  // Id 1 was let go: it and a new id are used as they are.
  assert.equal(requests.accept(1), 1);
  assert.equal(requests.accept(5000), 5000);
  // An unknown id's message is not taken for a late one (send() reports it).
  assert.equal(requests.isGone(7000, true), false);
});

Deno.test("http request ids: a server id of a session's making is no client id, and differs per session", () => {
  const [one, two] = [new SessionRequests(), new SessionRequests()];
  assert.equal(one.accept(2), 2);
  const renamed = one.accept(2);
  assert.notEqual(renamed, 2);
  assert.equal(one.isRenamed(renamed), true);
  assert.equal(one.isRenamed(2), false);
  assert.equal(one.isRenamed("2~1"), false);
  two.accept(2);
  assert.notEqual(two.accept(2), renamed);
  assert.equal(two.isRenamed(renamed), false);
});
