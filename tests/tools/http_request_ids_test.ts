// A session's requests keep their own identity (tools/kit/mcp_http_requests.ts):
// a client reusing the id of a request it abandoned gets its new call's answer,
// never the old call's late one; and what the SDK reports on a session
// (server.onerror) is logged once, without the message that caused it.
// In process, through McpHttpEndpoint.

import assert from "node:assert/strict";
import { z } from "zod";
import { defineServer, text, toolDefiner } from "../../tools/kit/mod.ts";
import { waitFor } from "../helpers.ts";
import { call, httpSession } from "./http_session.ts";

const tool = toolDefiner<Record<never, never>>();

/** What `slow` waits for: it ignores cancellation, as a call stuck in I/O would. */
let slowHeld = Promise.withResolvers<void>();
/** What `second` waits for, so it is still open when the old call answers. */
let secondHeld = Promise.withResolvers<void>();

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
  ],
  start: () => Promise.resolve({ context: {} }),
});

async function session() {
  slowHeld = Promise.withResolvers<void>();
  secondHeld = Promise.withResolvers<void>();
  const opened = await httpSession(ids, "debug");
  const close = opened[Symbol.asyncDispose];
  return {
    ...opened,
    async [Symbol.asyncDispose]() {
      slowHeld.resolve();
      secondHeld.resolve();
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
  let settled = false;
  const reused = s.inSession(call(2, "second")).finally(() => settled = true);
  await s.busy();
  slowHeld.resolve();
  // The old call's answer arrives: dropped (logged at debug), or, wrongly, the new POST's.
  await waitFor(
    () =>
      settled ||
      s.logs.some((line) => line.event === "mcp_late_message_dropped"),
    (done) => done,
  );
  secondHeld.resolve();
  const response = await reused;
  assert.equal(response.headers.get("content-type"), "application/json");
  const answer = await response.json();
  assert.equal(answer.id, 2, "the client's own id comes back");
  assert.deepEqual(answer.result.content, [{ type: "text", text: "second" }]);
  assert.equal(await s.idle(), true);
});

Deno.test("http request ids: what the SDK reports on a session is logged once, without the message's body", async () => {
  await using s = await session();
  // A response to nothing the server asked: the SDK's Protocol reports it to server.onerror.
  const stray = await s.inSession({
    jsonrpc: "2.0",
    id: 99,
    result: { password: "hunter2-stray" },
  });
  assert.equal(stray.status, 202);
  const errors = await waitFor(
    () => s.logs.filter((line) => line.event === "mcp_session_error"),
    (lines) => lines.length > 0,
  );
  assert.equal(errors.length, 1, JSON.stringify(errors));
  assert.equal(errors[0].level, "warn");
  assert.equal(errors[0].server, "ids");
  assert.equal(errors[0].session, s.id);
  assert.match(JSON.stringify(errors[0].error), /unknown message ID/);
  assert.ok(!JSON.stringify(s.logs).includes("hunter2"), "no body in logs");
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
