// @a2a-js/sdk 1.3.0's client against /v1/a2a/<agent> over a real socket,
// with both protocol versions it speaks: v1.0 (its native JSON-RPC
// transport) and 0.3 (its compat layer's legacy JSON-RPC transport).

import assert from "node:assert/strict";
import {
  CancelTaskRequest,
  GetTaskRequest,
  ListTasksRequest,
  TaskState,
} from "@a2a-js/sdk";
import { ClientFactory } from "@a2a-js/sdk/client";
import { MemoryStore } from "../../../platform/store/memory.ts";
import {
  a2aApp,
  artifactText,
  asTask,
  type Fixture,
  sendRequest,
  serve,
  type Served,
  v03Client,
  v1Client,
} from "./fixture.ts";

/** Runs `body` against a daemon on a socket; returns the JSON-RPC methods it was called with. */
async function withDaemon(
  body: (fixture: Fixture, server: Served) => Promise<void>,
): Promise<string[]> {
  const fixture = a2aApp(new MemoryStore());
  const methods: string[] = [];
  const server = serve(async (req) => {
    if (req.method === "POST") {
      methods.push((await req.clone().json()).method);
    }
    return await fixture.app.fetch(req);
  });
  try {
    await body(fixture, server);
    return methods;
  } finally {
    await fixture.service.close();
    await server.close();
  }
}

const CLIENTS = [
  ["1.0", v1Client, [
    "SendMessage",
    "SendStreamingMessage",
    "GetTask",
    "CancelTask",
  ]],
  ["0.3", v03Client, [
    "message/send",
    "message/stream",
    "tasks/get",
    "tasks/cancel",
  ]],
] as const;

for (const [version, makeClient, [send, stream, get, cancel]] of CLIENTS) {
  Deno.test(`sdk ${version}: sendMessage, getTask and a follow-up in the same context`, async () => {
    const methods = await withDaemon(async (fixture, server) => {
      const client = await makeClient(server, "echo");
      assert.equal(client.protocolVersion, version);
      const task = asTask(
        await client.sendMessage(sendRequest("good morning")),
      );
      assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
      assert.equal(artifactText(task), "GOOD MORNING");
      const again = asTask(
        await client.sendMessage(
          sendRequest("and again", { contextId: task.contextId }),
        ),
      );
      assert.equal(again.contextId, task.contextId);
      assert.deepEqual(
        fixture.host.turns.map((t) => t.input.session_id),
        [task.contextId, task.contextId],
      );
      const got = await client.getTask(
        GetTaskRequest.fromJSON({ id: task.id }),
      );
      assert.equal(got.id, task.id);
      assert.equal(got.status?.state, TaskState.TASK_STATE_COMPLETED);
      assert.equal(artifactText(got), "GOOD MORNING");
      assert.equal(got.history.length, 2);
    });
    assert.deepEqual(methods, [send, send, get]);
  });

  Deno.test(`sdk ${version}: sendMessageStream yields the task, status updates and the text chunks`, async () => {
    const methods = await withDaemon(async (_fixture, server) => {
      const client = await makeClient(server, "echo");
      const cases: string[] = [];
      let text = "";
      let last: TaskState | undefined;
      for await (
        const event of client.sendMessageStream(sendRequest("stream me please"))
      ) {
        const payload = event.payload;
        if (!payload) continue;
        cases.push(payload.$case);
        if (payload.$case === "artifactUpdate") {
          for (const part of payload.value.artifact?.parts ?? []) {
            if (part.content?.$case === "text") text += part.content.value;
          }
        }
        if (payload.$case === "statusUpdate") {
          last = payload.value.status?.state;
        }
      }
      assert.equal(cases[0], "task");
      assert.equal(cases[1], "statusUpdate");
      assert.ok(cases.filter((c) => c === "artifactUpdate").length > 1);
      assert.equal(text, "STREAM ME PLEASE");
      assert.equal(last, TaskState.TASK_STATE_COMPLETED);
    });
    assert.deepEqual(methods, [stream]);
  });

  Deno.test(`sdk ${version}: cancelTask stops a running turn`, async () => {
    const methods = await withDaemon(async (fixture, server) => {
      const client = await makeClient(server, "slow");
      const started = fixture.host.slowStarted();
      const task = asTask(
        await client.sendMessage(
          sendRequest("no hurry", { returnImmediately: true }),
        ),
      );
      assert.ok(
        task.status?.state === TaskState.TASK_STATE_SUBMITTED ||
          task.status?.state === TaskState.TASK_STATE_WORKING,
      );
      await started;
      const canceled = await client.cancelTask(
        CancelTaskRequest.fromJSON({ id: task.id }),
      );
      assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
      const got = await client.getTask(
        GetTaskRequest.fromJSON({ id: task.id }),
      );
      assert.equal(got.status?.state, TaskState.TASK_STATE_CANCELED);
      await assert.rejects(
        client.cancelTask(CancelTaskRequest.fromJSON({ id: task.id })),
        /cannot be canceled/,
      );
      await assert.rejects(
        client.getTask(GetTaskRequest.fromJSON({ id: "no-such-task" })),
        /Task not found/,
      );
    });
    assert.deepEqual(methods, [send, cancel, get, cancel, get]);
  });
}

Deno.test("sdk 1.0: listTasks, and discovery from the daemon's origin", async () => {
  await withDaemon(async (_fixture, server) => {
    const client = await new ClientFactory().createFromUrl(server.url);
    const first = asTask(await client.sendMessage(sendRequest("one")));
    const second = asTask(await client.sendMessage(sendRequest("two")));
    const listed = await client.listTasks(
      ListTasksRequest.fromJSON({ pageSize: 1 }),
    );
    assert.deepEqual(listed.tasks.map((t) => t.id), [second.id]);
    assert.equal(listed.totalSize, 2);
    const next = await client.listTasks(
      ListTasksRequest.fromJSON({
        pageSize: 1,
        pageToken: listed.nextPageToken,
      }),
    );
    assert.deepEqual(next.tasks.map((t) => t.id), [first.id]);
    assert.equal(next.nextPageToken, "");
  });
});
