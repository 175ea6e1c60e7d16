// The A2A JSON-RPC endpoint with raw requests through app.request(): the
// v1.0 methods and shapes, the 0.3 ones at the same URL, streaming,
// cancellation, context continuity and the standard error codes.

import assert from "node:assert/strict";
import { MemoryStore } from "../../../platform/store/memory.ts";
import { a2aApp, type Fixture, post, sseEvents } from "./fixture.ts";

const BASE = "http://localhost";
let nextId = 1;

async function rpc(
  fixture: Fixture,
  agent: string,
  method: string,
  params: unknown,
  headers: Record<string, string> = {},
) {
  const id = nextId++;
  const res = await fixture.app.request(
    `${BASE}/v1/a2a/${agent}`,
    post({ jsonrpc: "2.0", id, method, params }, headers),
  );
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(body.jsonrpc, "2.0");
  assert.equal(body.id, id);
  return body;
}

function v1Message(text: string, extra: Record<string, unknown> = {}) {
  return {
    message: {
      messageId: crypto.randomUUID(),
      role: "ROLE_USER",
      parts: [{ text }],
      ...extra,
    },
  };
}

function v03Message(text: string, extra: Record<string, unknown> = {}) {
  return {
    message: {
      kind: "message",
      messageId: crypto.randomUUID(),
      role: "user",
      parts: [{ kind: "text", text }],
      ...extra,
    },
  };
}

Deno.test("jsonrpc v1.0: SendMessage runs a turn as a task; contextId keeps the conversation", async () => {
  const fixture = a2aApp(new MemoryStore());
  const first = await rpc(fixture, "echo", "SendMessage", v1Message("hello"));
  const task = first.result.task;
  assert.equal(task.status.state, "TASK_STATE_COMPLETED");
  assert.equal(task.status.message.role, "ROLE_AGENT");
  assert.deepEqual(task.status.message.parts, [{ text: "HELLO" }]);
  assert.deepEqual(task.artifacts, [{
    artifactId: "response",
    name: "response",
    parts: [{ text: "HELLO" }],
  }]);
  assert.deepEqual(task.history.map((m: { role: string }) => m.role), [
    "ROLE_USER",
    "ROLE_AGENT",
  ]);
  assert.equal(task.history[0].taskId, task.id);
  assert.ok(task.contextId);

  const second = await rpc(
    fixture,
    "echo",
    "SendMessage",
    v1Message("again", { contextId: task.contextId }),
  );
  assert.equal(second.result.task.contextId, task.contextId);
  assert.notEqual(second.result.task.id, task.id);
  assert.deepEqual(
    fixture.host.turns.map((t) => t.input.session_id),
    [task.contextId, task.contextId],
  );

  const got = await rpc(fixture, "echo", "GetTask", {
    id: task.id,
    historyLength: 1,
  });
  assert.equal(got.result.status.state, "TASK_STATE_COMPLETED");
  assert.deepEqual(got.result.history.map((m: { role: string }) => m.role), [
    "ROLE_AGENT",
  ]);
  const none = await rpc(fixture, "echo", "GetTask", {
    id: task.id,
    historyLength: 0,
  });
  assert.deepEqual(none.result.history, []);
});

Deno.test("jsonrpc v1.0: ListTasks pages newest first and filters by state and context", async () => {
  const fixture = a2aApp(new MemoryStore());
  const ids: string[] = [];
  for (const text of ["a", "b", "c"]) {
    ids.push(
      (await rpc(fixture, "echo", "SendMessage", v1Message(text))).result.task
        .id,
    );
  }
  const failed = await rpc(fixture, "broken", "SendMessage", v1Message("x"));
  assert.equal(failed.result.task.status.state, "TASK_STATE_FAILED");

  const page1 = await rpc(fixture, "echo", "ListTasks", { pageSize: 2 });
  assert.deepEqual(page1.result.tasks.map((t: { id: string }) => t.id), [
    ids[2],
    ids[1],
  ]);
  assert.equal(page1.result.totalSize, 3);
  assert.equal(page1.result.pageSize, 2);
  assert.equal(
    page1.result.tasks[0].artifacts,
    undefined,
    "artifacts only on request",
  );
  const page2 = await rpc(fixture, "echo", "ListTasks", {
    pageSize: 2,
    pageToken: page1.result.nextPageToken,
    includeArtifacts: true,
  });
  assert.deepEqual(page2.result.tasks.map((t: { id: string }) => t.id), [
    ids[0],
  ]);
  assert.equal(page2.result.nextPageToken, "");
  assert.equal(page2.result.tasks[0].artifacts[0].parts[0].text, "A");

  const completed = await rpc(fixture, "echo", "ListTasks", {
    status: "TASK_STATE_FAILED",
  });
  assert.deepEqual(completed.result.tasks, []);
  const context =
    (await rpc(fixture, "echo", "GetTask", { id: ids[1] })).result.contextId;
  const byContext = await rpc(fixture, "echo", "ListTasks", {
    contextId: context,
  });
  assert.deepEqual(byContext.result.tasks.map((t: { id: string }) => t.id), [
    ids[1],
  ]);
  const brokenTasks = await rpc(fixture, "broken", "ListTasks", {});
  assert.equal(brokenTasks.result.totalSize, 1);
  assert.match(
    brokenTasks.result.tasks[0].status.message.parts[0].text,
    /Turn bound hit/,
  );
});

Deno.test("jsonrpc 0.3: message/send, tasks/get and tasks/list speak 0.3 shapes at the same URL", async () => {
  const fixture = a2aApp(new MemoryStore());
  const sent = await rpc(fixture, "echo", "message/send", v03Message("hi"), {
    "A2A-Version": "0.3",
  });
  const task = sent.result;
  assert.equal(task.kind, "task");
  assert.equal(task.status.state, "completed");
  assert.equal(task.status.message.kind, "message");
  assert.equal(task.status.message.role, "agent");
  assert.deepEqual(task.artifacts[0].parts, [{ kind: "text", text: "HI" }]);
  const got = await rpc(fixture, "echo", "tasks/get", { id: task.id });
  assert.equal(got.result.kind, "task");
  assert.equal(got.result.status.state, "completed");
  const listed = await rpc(fixture, "echo", "tasks/list", {
    status: "completed",
  });
  assert.deepEqual(listed.result.tasks.map((t: { id: string }) => t.id), [
    task.id,
  ]);
  // A task is one task, whatever dialect reads it.
  const v1 = await rpc(fixture, "echo", "GetTask", { id: task.id });
  assert.equal(v1.result.status.state, "TASK_STATE_COMPLETED");
  const data = await rpc(fixture, "echo", "message/send", {
    message: {
      kind: "message",
      messageId: "m-data",
      role: "user",
      parts: [{ kind: "data", data: { ask: "x" } }],
    },
  });
  assert.equal(data.result.artifacts[0].parts[0].text, '{"ASK":"X"}');
});

Deno.test("jsonrpc: streaming sends the task, working, the answer in chunks, then the end (both dialects)", async () => {
  const fixture = a2aApp(new MemoryStore());
  const v1 = await fixture.app.request(
    `${BASE}/v1/a2a/echo`,
    post({
      jsonrpc: "2.0",
      id: "s1",
      method: "SendStreamingMessage",
      params: v1Message("hello world"),
    }),
  );
  assert.equal(v1.headers.get("content-type"), "text/event-stream");
  const events = (await sseEvents(v1)) as {
    id: string;
    result: Record<string, Record<string, unknown>>;
  }[];
  assert.ok(events.every((e) => e.id === "s1"));
  const kinds = events.map((e) => Object.keys(e.result)[0]);
  assert.equal(kinds[0], "task");
  assert.deepEqual(events[0].result.task.status, {
    state: "TASK_STATE_SUBMITTED",
    timestamp:
      (events[0].result.task.status as { timestamp: string }).timestamp,
  });
  assert.deepEqual(kinds.slice(1, 2), ["statusUpdate"]);
  assert.equal(kinds.at(-1), "statusUpdate");
  const chunks = events.filter((e) => e.result.artifactUpdate).map((e) =>
    e.result.artifactUpdate as {
      artifact: { parts: { text: string }[] };
      append?: boolean;
      lastChunk?: boolean;
    }
  );
  assert.equal(chunks.length, 4, "HELLO WORLD in 3-character chunks");
  assert.equal(
    chunks.map((c) => c.artifact.parts[0].text).join(""),
    "HELLO WORLD",
  );
  assert.deepEqual(chunks.map((c) => [c.append, c.lastChunk]), [
    [false, false],
    [true, false],
    [true, false],
    [true, true],
  ]);
  const states = events.filter((e) => e.result.statusUpdate).map((e) =>
    (e.result.statusUpdate as { status: { state: string } }).status.state
  );
  assert.deepEqual(states, ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]);

  const v03 = await fixture.app.request(
    `${BASE}/v1/a2a/echo`,
    post({
      jsonrpc: "2.0",
      id: 7,
      method: "message/stream",
      params: v03Message("abc"),
    }),
  );
  const legacy = (await sseEvents(v03)) as {
    result: { kind: string; final?: boolean; status?: { state: string } };
  }[];
  assert.deepEqual(legacy.map((e) => e.result.kind), [
    "task",
    "status-update",
    "artifact-update",
    "status-update",
  ]);
  assert.equal(legacy[3].result.final, true);
  assert.equal(legacy[3].result.status?.state, "completed");
});

Deno.test("jsonrpc: CancelTask aborts a running turn (v1.0 and 0.3)", async () => {
  const fixture = a2aApp(new MemoryStore());
  const started = fixture.host.slowStarted();
  const sent = await rpc(fixture, "slow", "SendMessage", {
    ...v1Message("take your time"),
    configuration: { returnImmediately: true },
  });
  const task = sent.result.task;
  assert.ok(
    ["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"].includes(task.status.state),
  );
  await started;
  const canceled = await rpc(fixture, "slow", "CancelTask", { id: task.id });
  assert.equal(canceled.result.status.state, "TASK_STATE_CANCELED");
  const got = await rpc(fixture, "slow", "GetTask", { id: task.id });
  assert.equal(got.result.status.state, "TASK_STATE_CANCELED");
  const again = await rpc(fixture, "slow", "CancelTask", { id: task.id });
  assert.equal(again.error.code, -32002);

  const started03 = fixture.host.slowStarted();
  const sent03 = await rpc(fixture, "slow", "message/send", {
    ...v03Message("slowly"),
    configuration: { blocking: false },
  });
  await started03;
  const canceled03 = await rpc(fixture, "slow", "tasks/cancel", {
    id: sent03.result.id,
  });
  assert.equal(canceled03.result.status.state, "canceled");
  assert.equal(fixture.service.runs.isRunning(task.id), false);
  assert.equal(fixture.service.runs.isRunning(sent03.result.id), false);
});

Deno.test("jsonrpc: a request envelope in the metadata is recorded in the inbox; a notification runs no turn", async () => {
  const fixture = a2aApp(new MemoryStore());
  const envelope = (type: string) => ({
    "agentd.envelope": {
      version: "1.0.0",
      type,
      from_agent: "alice",
      priority: "high",
    },
  });
  const note = await rpc(
    fixture,
    "echo",
    "SendMessage",
    v1Message("fyi", {
      metadata: envelope("notification"),
    }),
  );
  assert.equal(note.result.message.role, "ROLE_AGENT");
  assert.match(note.result.message.parts[0].text, /^Accepted notification /);
  assert.equal(fixture.host.turns.length, 0);
  const asked = await rpc(
    fixture,
    "echo",
    "SendMessage",
    v1Message("question", {
      metadata: envelope("request"),
    }),
  );
  assert.equal(asked.result.task.status.state, "TASK_STATE_COMPLETED");
  assert.equal(fixture.host.turns[0].input.from, "alice");
  const inbox =
    await (await fixture.app.request(`${BASE}/v1/a2a/echo/messages`)).json();
  assert.deepEqual(
    inbox.data.map((m: { type: string; status: string; priority: string }) => [
      m.type,
      m.status,
      m.priority,
    ]),
    [["request", "answered", "high"], ["notification", "accepted", "high"]],
  );
  assert.equal(inbox.data[0].task_id, asked.result.task.id);
});

Deno.test("jsonrpc: errors carry the standard codes", async () => {
  const fixture = a2aApp(new MemoryStore());
  const raw = async (body: string, headers: Record<string, string> = {}) => {
    const res = await fixture.app.request(
      `${BASE}/v1/a2a/echo`,
      post(body, headers),
    );
    assert.equal(res.status, 200);
    return await res.json();
  };
  const parse = await raw("{oops");
  assert.deepEqual([parse.id, parse.error.code], [null, -32700]);
  assert.equal((await raw("[]")).error.code, -32600);
  const noVersion = await raw(JSON.stringify({ id: 3, method: "GetTask" }));
  assert.deepEqual([noVersion.id, noVersion.error.code], [3, -32600]);
  assert.equal(
    (await rpc(fixture, "echo", "tasks/doSomething", {})).error.code,
    -32601,
  );
  assert.equal(
    (await rpc(fixture, "echo", "SendMessage", {})).error.code,
    -32602,
  );
  assert.equal(
    (await rpc(fixture, "echo", "SendMessage", {
      message: { messageId: "m", parts: [] },
    }))
      .error.code,
    -32602,
  );
  const file = await rpc(fixture, "echo", "message/send", {
    message: {
      kind: "message",
      messageId: "m",
      role: "user",
      parts: [{ kind: "file", file: { uri: "https://example.test/a.pdf" } }],
    },
  });
  assert.equal(file.error.code, -32005);
  assert.equal(
    (await rpc(fixture, "echo", "GetTask", { id: "nope" })).error.code,
    -32001,
  );
  assert.equal((await rpc(fixture, "echo", "GetTask", {})).error.code, -32602);
  const done =
    (await rpc(fixture, "echo", "SendMessage", v1Message("x"))).result.task;
  assert.equal(
    (await rpc(fixture, "slow", "GetTask", { id: done.id })).error.code,
    -32001,
    "another agent's task is not found",
  );
  assert.equal(
    (await rpc(fixture, "echo", "CancelTask", { id: done.id })).error.code,
    -32002,
  );
  const followUp = await rpc(
    fixture,
    "echo",
    "SendMessage",
    v1Message("more", { taskId: done.id }),
  );
  assert.equal(followUp.error.code, -32004);
  assert.match(
    followUp.error.message,
    new RegExp(`contextId ${done.contextId}`),
  );
  assert.equal(
    (await rpc(fixture, "echo", "SubscribeToTask", { id: done.id })).error.code,
    -32004,
  );
  assert.equal(
    (await rpc(fixture, "echo", "CreateTaskPushNotificationConfig", {})).error
      .code,
    -32003,
  );
  assert.equal(
    (await rpc(fixture, "echo", "GetExtendedAgentCard", {})).error.code,
    -32007,
  );
  const version = await rpc(fixture, "echo", "GetTask", { id: done.id }, {
    "A2A-Version": "2.0",
  });
  assert.equal(version.error.code, -32009);
  assert.equal(
    (await rpc(fixture, "echo", "ListTasks", { pageToken: "bogus" })).error
      .code,
    -32602,
  );
  const unknown = await fixture.app.request(
    `${BASE}/v1/a2a/nobody`,
    post({
      jsonrpc: "2.0",
      id: 1,
      method: "GetTask",
      params: { id: "x" },
    }),
  );
  assert.equal(unknown.status, 404);
  assert.equal((await unknown.json()).error.code, "not_found");
});

Deno.test("jsonrpc: SubscribeToTask follows a running task to its end", async () => {
  const fixture = a2aApp(new MemoryStore());
  const started = fixture.host.slowStarted();
  const sent = await rpc(fixture, "slow", "SendMessage", {
    ...v1Message("wait for it"),
    configuration: { returnImmediately: true },
  });
  await started;
  const res = await fixture.app.request(
    `${BASE}/v1/a2a/slow`,
    post({
      jsonrpc: "2.0",
      id: "sub",
      method: "SubscribeToTask",
      params: { id: sent.result.task.id },
    }),
  );
  fixture.host.release("finally done");
  const events = (await sseEvents(res)) as {
    result: Record<string, Record<string, unknown>>;
  }[];
  assert.deepEqual(events.map((e) => Object.keys(e.result)[0]), [
    "task",
    "artifactUpdate",
    "statusUpdate",
  ]);
  assert.equal(
    (events[0].result.task.status as { state: string }).state,
    "TASK_STATE_WORKING",
  );
  // The streamed "thinking…" was not the answer: the last chunk replaces it.
  assert.deepEqual(events[1].result.artifactUpdate, {
    taskId: sent.result.task.id,
    contextId: sent.result.task.contextId,
    artifact: {
      artifactId: "response",
      name: "response",
      parts: [{ text: "finally done" }],
    },
    append: false,
    lastChunk: true,
  });
});

Deno.test("jsonrpc: a stream the client drops leaves the task running", async () => {
  const fixture = a2aApp(new MemoryStore());
  const started = fixture.host.slowStarted();
  const res = await fixture.app.request(
    `${BASE}/v1/a2a/slow`,
    post({
      jsonrpc: "2.0",
      id: 1,
      method: "SendStreamingMessage",
      params: v1Message("drop me"),
    }),
  );
  const reader = res.body?.getReader();
  assert.ok(reader);
  const first = await reader.read();
  const text = new TextDecoder().decode(first.value);
  const taskId = JSON.parse(text.slice("data: ".length)).result.task.id;
  await reader.cancel();
  await started;
  assert.equal(fixture.service.runs.isRunning(taskId), true);
  const canceled = await rpc(fixture, "slow", "CancelTask", { id: taskId });
  assert.equal(canceled.result.status.state, "TASK_STATE_CANCELED");
});
