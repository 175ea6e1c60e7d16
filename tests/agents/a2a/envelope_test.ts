// POST /v1/a2a/message (the seed's envelope) and the inbox read endpoint,
// through app.request(): each message type, bad input, unknown receivers,
// failing turns and token-bound callers.

import assert from "node:assert/strict";
import { MemoryStore } from "../../../platform/store/memory.ts";
import { a2aApp, post, serve, storedKeys } from "./fixture.ts";

const URL_BASE = "http://localhost";

function envelope(overrides: Record<string, unknown> = {}) {
  return {
    version: "1.0.0",
    type: "request",
    from_agent: "alice",
    to_agent: "echo",
    content: "hello there",
    priority: "high",
    ...overrides,
  };
}

Deno.test("envelope: a request runs the receiver and is answered by a response envelope", async () => {
  const store = new MemoryStore();
  const { app, host } = a2aApp(store);
  const res = await app.request(`${URL_BASE}/v1/a2a/message`, post(envelope()));
  assert.equal(res.status, 200);
  const answer = await res.json();
  assert.equal(answer.type, "response");
  assert.equal(answer.from_agent, "echo");
  assert.equal(answer.to_agent, "alice");
  assert.equal(answer.content, "HELLO THERE");
  assert.equal(answer.priority, "high");
  assert.equal(answer.version, "1.0.0");
  assert.match(answer.id, /^[0-9a-f-]{36}$/);
  assert.ok(answer.in_reply_to);
  assert.ok(Date.parse(answer.created_at) > 0);
  assert.deepEqual(host.turns.map((t) => t.input), [{
    text: "hello there",
    session_id: "envelope:alice",
    from: "alice",
  }]);

  // The request is recorded, answered, and in the receiver's inbox.
  const inbox = await app.request(`${URL_BASE}/v1/a2a/echo/messages`);
  assert.equal(inbox.status, 200);
  const page = await inbox.json();
  assert.equal(page.data.length, 1);
  const request = page.data[0];
  assert.equal(request.id, answer.in_reply_to);
  assert.equal(request.type, "request");
  assert.equal(request.status, "answered");
  assert.equal(request.reply_id, answer.id);
  assert.equal(page.next_cursor, null);
});

Deno.test("envelope: the receiver can be named by id; priority defaults to normal", async () => {
  const { app } = a2aApp(new MemoryStore());
  const body = envelope({ to_agent: "agt_echo" });
  delete (body as { priority?: string }).priority;
  const res = await app.request(`${URL_BASE}/v1/a2a/message`, post(body));
  assert.equal(res.status, 200);
  const answer = await res.json();
  assert.equal(answer.from_agent, "echo");
  assert.equal(answer.priority, "normal");
});

Deno.test("envelope: notification, response and error are accepted (202) into the inbox without a turn", async () => {
  const { app, host } = a2aApp(new MemoryStore());
  const ids: string[] = [];
  for (const type of ["notification", "response", "error"]) {
    const res = await app.request(
      `${URL_BASE}/v1/a2a/message`,
      post(envelope({ type, content: `a ${type}`, in_reply_to: "r-1" })),
    );
    assert.equal(res.status, 202);
    const body = await res.json();
    assert.deepEqual(Object.keys(body).sort(), ["id", "status"]);
    assert.equal(body.status, "accepted");
    ids.push(body.id);
  }
  assert.equal(host.turns.length, 0, "no turn runs for one-way messages");

  const newest = await (await app.request(
    `${URL_BASE}/v1/a2a/echo/messages?limit=2`,
  )).json();
  assert.deepEqual(newest.data.map((m: { id: string }) => m.id), [
    ids[2],
    ids[1],
  ]);
  assert.equal(newest.data[0].type, "error");
  assert.equal(newest.data[0].in_reply_to, "r-1");
  assert.equal(newest.data[0].status, "accepted");
  assert.ok(newest.next_cursor);
  const rest = await (await app.request(
    `${URL_BASE}/v1/a2a/echo/messages?limit=2&cursor=${
      encodeURIComponent(newest.next_cursor)
    }`,
  )).json();
  assert.deepEqual(rest.data.map((m: { id: string }) => m.id), [ids[0]]);
  assert.equal(rest.next_cursor, null);

  const oldest = await (await app.request(
    `${URL_BASE}/v1/a2a/agt_echo/messages?order=asc`,
  )).json();
  assert.deepEqual(oldest.data.map((m: { id: string }) => m.id), ids);
});

Deno.test("envelope: bad input is a 400 naming the field, and nothing is stored", async () => {
  const store = new MemoryStore();
  const { app, host } = a2aApp(store);
  const cases: [string, unknown, RegExp][] = [
    ["missing content", envelope({ content: undefined }), /content/],
    ["missing from_agent", envelope({ from_agent: undefined }), /from_agent/],
    ["extra field", envelope({ urgent: true }), /urgent/],
    ["wrong type", envelope({ type: "command" }), /type/],
    [
      "bad version",
      envelope({ version: "1.0" }),
      /version: must be a dotted three-part/,
    ],
    ["bad priority", envelope({ priority: "critical" }), /priority/],
    ["number content", envelope({ content: 42 }), /content/],
    ["empty to_agent", envelope({ to_agent: "  " }), /to_agent/],
    ["not an object", [1, 2], /expected object/],
  ];
  for (const [label, body, pattern] of cases) {
    const res = await app.request(`${URL_BASE}/v1/a2a/message`, post(body));
    assert.equal(res.status, 400, label);
    const { error } = await res.json();
    assert.equal(error.code, "invalid_request", label);
    assert.match(error.message, pattern, label);
    assert.ok(Array.isArray(error.details), label);
  }
  const bad = await app.request(
    `${URL_BASE}/v1/a2a/message`,
    post("{not json"),
  );
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).error.message, /not valid JSON/);
  const form = await app.request(`${URL_BASE}/v1/a2a/message`, {
    method: "POST",
    headers: { "content-type": "text/plain" },
    body: "hello",
  });
  assert.equal(form.status, 415);
  const unknown = await app.request(
    `${URL_BASE}/v1/a2a/message`,
    post(envelope({ to_agent: "nobody" })),
  );
  assert.equal(unknown.status, 404);
  assert.match((await unknown.json()).error.message, /No agent "nobody"/);
  assert.deepEqual(await storedKeys(store), []);
  assert.equal(host.turns.length, 0);
});

Deno.test("envelope: a provider that is down gives 503, a failed turn 502; both are recorded with an error reply", async () => {
  const { app } = a2aApp(new MemoryStore());
  const down = await app.request(
    `${URL_BASE}/v1/a2a/message`,
    post(envelope({ to_agent: "down" })),
  );
  assert.equal(down.status, 503);
  const downError = (await down.json()).error;
  assert.equal(downError.code, "unavailable");
  assert.match(
    downError.message,
    /Agent "down" could not answer: Cannot reach provider/,
  );
  assert.ok(downError.details.request_id);

  const broken = await app.request(
    `${URL_BASE}/v1/a2a/message`,
    post(envelope({ to_agent: "broken" })),
  );
  assert.equal(broken.status, 502);
  const { details } = (await broken.json()).error;
  const inbox = await (await app.request(`${URL_BASE}/v1/a2a/broken/messages`))
    .json();
  assert.equal(inbox.data.length, 1);
  assert.equal(inbox.data[0].id, details.request_id);
  assert.equal(inbox.data[0].status, "failed");
  assert.match(inbox.data[0].error, /Turn bound hit/);
  assert.equal(inbox.data[0].reply_id, details.error_id);
});

Deno.test("envelope: a response to a local sender lands in the sender's inbox", async () => {
  const { app } = a2aApp(new MemoryStore());
  const res = await app.request(
    `${URL_BASE}/v1/a2a/message`,
    post(envelope({ from_agent: "slow", content: "ping" })),
  );
  const answer = await res.json();
  const inbox = await (await app.request(`${URL_BASE}/v1/a2a/slow/messages`))
    .json();
  assert.deepEqual(inbox.data.map((m: { id: string }) => m.id), [answer.id]);
  assert.equal(inbox.data[0].content, "PING");
});

Deno.test("inbox: unknown agent 404, bad limit or cursor 400", async () => {
  const { app } = a2aApp(new MemoryStore());
  assert.equal(
    (await app.request(`${URL_BASE}/v1/a2a/nobody/messages`)).status,
    404,
  );
  for (const query of ["limit=0", "limit=101", "limit=x", "order=sideways"]) {
    const res = await app.request(`${URL_BASE}/v1/a2a/echo/messages?${query}`);
    assert.equal(res.status, 400, query);
    assert.match((await res.json()).error.message, /Invalid query/);
  }
  const res = await app.request(
    `${URL_BASE}/v1/a2a/echo/messages?cursor=garbage`,
  );
  assert.equal(res.status, 400);
  assert.match((await res.json()).error.message, /Invalid cursor/);
});

Deno.test("envelope: an agent's token binds from_agent and the inbox it reads", async () => {
  const store = new MemoryStore();
  const { app } = a2aApp(store, {
    agentTokens: { slow: "token-of-slow-0123456789" },
  });
  const auth = { authorization: "Bearer token-of-slow-0123456789" };
  const spoofed = await app.request(
    `${URL_BASE}/v1/a2a/message`,
    post(envelope({ from_agent: "echo", type: "notification" }), auth),
  );
  assert.equal(spoofed.status, 403);
  assert.match(
    (await spoofed.json()).error.message,
    /from_agent must be "slow"/,
  );
  assert.deepEqual(await storedKeys(store), []);
  const own = await app.request(
    `${URL_BASE}/v1/a2a/message`,
    post(envelope({ from_agent: "slow", type: "notification" }), auth),
  );
  assert.equal(own.status, 202);
  const other = await app.request(`${URL_BASE}/v1/a2a/echo/messages`, {
    headers: auth,
  });
  assert.equal(other.status, 403);
  const mine = await app.request(`${URL_BASE}/v1/a2a/slow/messages`, {
    headers: auth,
  });
  assert.equal(mine.status, 200);
});

Deno.test("envelope and card over a real socket", async () => {
  const store = new MemoryStore();
  const { app } = a2aApp(store);
  const server = serve(app.fetch);
  try {
    const card = await (await fetch(`${server.url}/v1/a2a/echo/card`)).json();
    assert.equal(card.endpoints.a2a, `${server.url}/v1/a2a/echo`);
    const send = (body: unknown) =>
      fetch(`${server.url}/v1/a2a/message`, post(body));
    const answer = await send(envelope({ content: "over the wire" }));
    assert.equal(answer.status, 200);
    assert.equal((await answer.json()).content, "OVER THE WIRE");
    const note = await send(envelope({ type: "notification" }));
    assert.equal(note.status, 202);
    await note.body?.cancel();
    const bad = await send("{");
    assert.equal(bad.status, 400);
    assert.equal((await bad.json()).error.code, "invalid_request");
    const inbox = await (await fetch(`${server.url}/v1/a2a/echo/messages`))
      .json();
    assert.deepEqual(
      inbox.data.map((m: { type: string }) => m.type),
      ["notification", "request"],
    );
  } finally {
    await server.close();
  }
});
