// Two daemons (two apps on two real ports) exchanging seed envelopes with
// a remote to_agent, the a2a__send_message tool, and the records surviving
// a reopened Deno KV store.

import assert from "node:assert/strict";
import { join } from "node:path";
import { a2aMessagingTool } from "../../../agents/a2a/tool.ts";
import { openKvStore } from "../../../platform/store/kv.ts";
import { MemoryStore } from "../../../platform/store/memory.ts";
import { a2aApp, type Fixture, serve, type Served } from "./fixture.ts";

interface Daemon {
  fixture: Fixture;
  server: Served;
  /** JSON-RPC methods it was called with. */
  methods: string[];
}

function daemon(fixture = a2aApp(new MemoryStore())): Daemon {
  const methods: string[] = [];
  const server = serve(async (req) => {
    if (
      req.method === "POST" && new URL(req.url).pathname !== "/v1/a2a/message"
    ) {
      methods.push((await req.clone().json()).method);
    }
    return await fixture.app.fetch(req);
  });
  return { fixture, server, methods };
}

async function stop(...daemons: Daemon[]): Promise<void> {
  for (const d of daemons) {
    await d.fixture.service.close();
    await d.server.close();
  }
}

function envelope(to: string, overrides: Record<string, unknown> = {}) {
  return {
    version: "1.0.0",
    type: "request",
    from_agent: "slow",
    to_agent: to,
    content: "ping from a",
    priority: "high",
    ...overrides,
  };
}

async function postTo(d: Daemon, body: unknown): Promise<Response> {
  return await fetch(`${d.server.url}/v1/a2a/message`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

async function inboxOf(d: Daemon, agent: string) {
  const res = await fetch(`${d.server.url}/v1/a2a/${agent}/messages`);
  return (await res.json()).data;
}

Deno.test("two daemons: a request to a remote to_agent goes over A2A and comes back as a response envelope", async () => {
  const a = daemon();
  const b = daemon();
  try {
    const res = await postTo(a, envelope(`${b.server.url}/v1/a2a/echo`));
    assert.equal(res.status, 200);
    const answer = await res.json();
    assert.equal(answer.type, "response");
    assert.equal(answer.from_agent, "echo");
    assert.equal(answer.to_agent, "slow");
    assert.equal(answer.content, "PING FROM A");
    assert.equal(answer.priority, "high");
    assert.deepEqual(b.methods, ["SendMessage"]);
    assert.deepEqual(b.fixture.host.turns.map((t) => t.input.from), ["slow"]);

    // B recorded the request in echo's inbox, linked to its task.
    const [received] = await inboxOf(b, "echo");
    assert.equal(received.type, "request");
    assert.equal(received.from_agent, "slow");
    assert.equal(received.status, "answered");
    assert.equal(received.priority, "high");
    assert.equal(received.task_id, answer.task_id);
    // A recorded its request (answered) and put the response in slow's inbox.
    const [reply] = await inboxOf(a, "slow");
    assert.equal(reply.id, answer.id);
    const request = await a.fixture.service.envelopes.get(answer.in_reply_to);
    assert.equal(request?.status, "answered");
    assert.equal(request?.to_agent, `${b.server.url}/v1/a2a/echo`);
  } finally {
    await stop(a, b);
  }
});

Deno.test("two daemons: a notification is delivered to the remote inbox without a turn", async () => {
  const a = daemon();
  const b = daemon();
  try {
    const res = await postTo(
      a,
      envelope(`${b.server.url}/v1/a2a/slow`, {
        type: "notification",
        content: "heads up",
      }),
    );
    assert.equal(res.status, 202);
    const { id, status } = await res.json();
    assert.equal(status, "accepted");
    assert.equal(
      (await a.fixture.service.envelopes.get(id))?.status,
      "delivered",
    );
    assert.equal(b.fixture.host.turns.length, 0);
    const [note] = await inboxOf(b, "slow");
    assert.deepEqual(
      [note.type, note.from_agent, note.content, note.status],
      ["notification", "slow", "heads up", "accepted"],
    );
  } finally {
    await stop(a, b);
  }
});

Deno.test("two daemons: a 0.3-only remote card makes the client speak 0.3", async () => {
  const a = daemon();
  const b = daemon();
  // A 0.3 card (no supportedInterfaces) for B's echo, served elsewhere.
  const card = serve(async () => {
    const res = await fetch(
      `${b.server.url}/v1/a2a/echo/.well-known/agent-card.json`,
    );
    const { supportedInterfaces: _, ...legacy } = await res.json();
    return Response.json(legacy);
  });
  try {
    const res = await postTo(a, envelope(`${card.url}/agent-card.json`));
    assert.equal(res.status, 200);
    assert.equal((await res.json()).content, "PING FROM A");
    assert.deepEqual(b.methods, ["message/send"]);
  } finally {
    await card.close();
    await stop(a, b);
  }
});

Deno.test("two daemons: remote failures are a 502 with the reason, and the request is recorded as failed", async () => {
  const a = daemon();
  const b = daemon();
  try {
    const broken = await postTo(a, envelope(`${b.server.url}/v1/a2a/broken`));
    assert.equal(broken.status, 502);
    const { error } = await broken.json();
    assert.match(error.message, /task .* ended failed: Turn bound hit/);
    const record = await a.fixture.service.envelopes.get(error.details.id);
    assert.equal(record?.status, "failed");
    assert.match(record?.error ?? "", /Turn bound hit/);
    // The sender's inbox holds the error, as for a local request.
    const failure = await a.fixture.service.envelopes.get(
      error.details.error_id,
    );
    assert.equal(failure?.type, "error");
    assert.equal(failure?.to_agent, "slow");
    assert.equal(failure?.in_reply_to, error.details.id);
    assert.match(failure?.content ?? "", /Turn bound hit/);

    const missing = await postTo(a, envelope(`${b.server.url}/v1/a2a/nobody`));
    assert.equal(missing.status, 502);
    assert.match(
      (await missing.json()).error.message,
      /no agent card found.*HTTP 404.*that card describes .*\/v1\/a2a\/echo, not/,
    );
  } finally {
    await stop(a, b);
  }
});

Deno.test("tool a2a__send_message: requests and notifications to local and remote agents", async () => {
  const a = daemon();
  const b = daemon();
  try {
    const tool = a2aMessagingTool(a.fixture.service);
    assert.equal(tool.tool.name, "a2a__send_message");
    assert.deepEqual(tool.tool.parameters.required, ["to", "message"]);
    const context = { agent: "slow", signal: new AbortController().signal };
    assert.equal(
      await tool.call({ to: "echo", message: "local hello" }, context),
      "LOCAL HELLO",
    );
    assert.equal(
      await tool.call({
        to: `${b.server.url}/v1/a2a/echo`,
        message: "far away",
      }, context),
      "FAR AWAY",
    );
    const note = await tool.call(
      { to: "echo", message: "note", type: "notification" },
      context,
    );
    assert.match(note, /^Notification [0-9a-f-]{36} delivered to echo\.$/);
    const inbox = await inboxOf(a, "echo");
    assert.deepEqual(
      inbox.map((
        m: { type: string; from_agent: string },
      ) => [m.type, m.from_agent]),
      [["notification", "slow"], ["request", "slow"]],
    );
    await assert.rejects(
      tool.call({ to: "echo" }, context),
      /Invalid arguments: message/,
    );
    await assert.rejects(
      tool.call({ to: "echo", message: "x", type: "shout" }, context),
      /Invalid arguments: type/,
    );
    await assert.rejects(
      tool.call({ to: "slow", message: "me?" }, context),
      /to itself/,
    );
    await assert.rejects(
      tool.call({ to: "nobody", message: "hi" }, context),
      /No agent "nobody"/,
    );
    await assert.rejects(
      tool.call({ to: "down", message: "hi" }, context),
      /Agent "down" could not answer/,
    );
  } finally {
    await stop(a, b);
  }
});

Deno.test("persistence: messages, inboxes and tasks survive reopening the KV store", async () => {
  const dir = await Deno.makeTempDir();
  const path = join(dir, "agentd.kv");
  try {
    const store = await openKvStore(path);
    const first = a2aApp(store);
    const post = (body: unknown) =>
      first.app.request("http://localhost/v1/a2a/message", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const note = await (await post(envelope("echo", { type: "notification" })))
      .json();
    const answer = await (await post(envelope("echo"))).json();
    const rpc = async (
      fixture: Fixture,
      agent: string,
      method: string,
      params: unknown,
    ) =>
      await (await fixture.app.request(`http://localhost/v1/a2a/${agent}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
      })).json();
    const message = (text: string) => ({
      message: {
        messageId: crypto.randomUUID(),
        role: "ROLE_USER",
        parts: [{ text }],
      },
    });
    const done =
      (await rpc(first, "echo", "SendMessage", message("keep me"))).result.task;
    const started = first.host.slowStarted();
    const running = (await rpc(first, "slow", "SendMessage", {
      ...message("interrupted"),
      configuration: { returnImmediately: true },
    })).result.task;
    await started;
    await first.service.close(); // shutdown: the running turn is recorded as canceled
    await store.close();

    const reopened = await openKvStore(path);
    try {
      const second = a2aApp(reopened);
      const inbox = await (await second.app.request(
        "http://localhost/v1/a2a/echo/messages",
      ))
        .json();
      assert.deepEqual(
        inbox.data.map((m: { id: string }) => m.id),
        [answer.in_reply_to, note.id],
      );
      assert.equal(inbox.data[0].status, "answered");
      assert.equal(
        (await second.service.envelopes.get(answer.id))?.content,
        "PING FROM A",
      );
      const task =
        (await rpc(second, "echo", "GetTask", { id: done.id })).result;
      assert.equal(task.status.state, "TASK_STATE_COMPLETED");
      assert.equal(task.artifacts[0].parts[0].text, "KEEP ME");
      const interrupted =
        (await rpc(second, "slow", "GetTask", { id: running.id })).result;
      assert.equal(interrupted.status.state, "TASK_STATE_CANCELED");
      assert.match(interrupted.status.message.parts[0].text, /shutting down/);
      const listed = (await rpc(second, "echo", "ListTasks", {})).result;
      assert.equal(listed.totalSize, 1);
    } finally {
      await reopened.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
