// MCP tasks in the kit (2025-11-25, as @modelcontextprotocol/sdk 1.32.2 has
// them): a tool that declares taskSupport runs as a task when asked; the
// handle comes at once, tasks/result blocks until the end and answers what
// the plain call answers; cancel aborts the work; quiet long calls report
// progress; the kit's streamable HTTP and in-process links, and a server's
// routed (dynamic) tools, all serve it. A task is its caller's alone:
// tests/security/tasks_test.ts (the server is tests/tools/tasks_harness.ts).

import assert from "node:assert/strict";
import { HostedServer } from "../../tools/kit/host.ts";
import { connectInProcess } from "../../tools/kit/transport/sdk_server.ts";
import { McpHttpEndpoint } from "../../tools/kit/transport/http_server.ts";
import {
  CallToolResultSchema,
  Client,
  ElicitRequestSchema,
  StreamableHTTPClientTransport,
} from "../../platform/mcp_sdk.ts";
import { MemoryStore } from "../../platform/store/memory.ts";
import { capturedLog, waitFor } from "../helpers.ts";
import {
  Gates,
  hosted,
  rpcError,
  startTask,
  taskSpec,
} from "./tasks_harness.ts";

Deno.test("tasks: listed with execution.taskSupport, the capability declared; a tool without it is refused (-32601)", async () => {
  await using kit = await hosted();
  const client = await kit.client();
  const capabilities = client.getServerCapabilities();
  assert.deepEqual(capabilities?.tasks, {
    list: {},
    cancel: {},
    requests: { tools: { call: {} } },
  });
  const { tools } = await client.listTools();
  assert.deepEqual(tools.find((t) => t.name === "hold")?.execution, {
    taskSupport: "optional",
  });
  assert.equal(tools.find((t) => t.name === "quick")?.execution, undefined);
  const refused = await rpcError(startTask(client, "quick", {}));
  assert.equal(refused.code, -32601);
  assert.match(refused.message, /quick.*does not run as a task/);
});

Deno.test("tasks: the handle comes at once, tasks/result blocks until the end and equals the plain call's answer", async () => {
  await using kit = await hosted();
  const client = await kit.client();
  const created = await startTask(client, "hold", { key: "a" });
  const id = created.task.taskId;
  assert.equal(created.task.status, "working");
  assert.equal(typeof created.task.ttl, "number");
  assert.ok(created.task.pollInterval);
  // The call runs in the background: its handle came while it still waits.
  await waitFor(() => kit.gates.started.has("a"), Boolean);
  assert.equal((await client.experimental.tasks.getTask(id)).status, "working");
  const listed = await client.experimental.tasks.listTasks();
  assert.deepEqual(listed.tasks.map((task) => task.taskId), [id]);

  const result = client.experimental.tasks.getTaskResult(
    id,
    CallToolResultSchema,
  );
  let settled = false;
  void result.then(() => settled = true, () => settled = true);
  await client.experimental.tasks.getTask(id); // a round trip: tasks/result has not answered meanwhile
  assert.equal(settled, false, "tasks/result blocks while the task works");
  kit.gates.release("a");
  const answered = await result;

  const plain = await client.callTool({
    name: "hold",
    arguments: { key: "a" },
  });
  const { _meta, ...rest } = answered;
  assert.deepEqual(_meta, {
    "io.modelcontextprotocol/related-task": { taskId: id },
  });
  assert.deepEqual(rest, plain);
  const done = await client.experimental.tasks.getTask(id);
  assert.equal(done.status, "completed");
  assert.ok(Date.parse(done.lastUpdatedAt) >= Date.parse(done.createdAt));
});

Deno.test("tasks: cancel aborts the running call; the task stays cancelled and has no result", async () => {
  await using kit = await hosted();
  const client = await kit.client();
  const { task } = await startTask(client, "hold", { key: "b" });
  await waitFor(() => kit.gates.started.has("b"), Boolean);
  const cancelled = await client.experimental.tasks.cancelTask(task.taskId);
  assert.equal(cancelled.status, "cancelled");
  await waitFor(() => kit.gates.aborted.has("b"), Boolean);
  const again = await rpcError(
    client.experimental.tasks.cancelTask(task.taskId),
  );
  assert.equal(again.code, -32602);
  assert.match(again.message, /terminal status 'cancelled'/);
  const noResult = await rpcError(
    client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema),
  );
  assert.equal(noResult.code, -32602);
  // The aborted call's own end does not move it.
  assert.equal(
    (await client.experimental.tasks.getTask(task.taskId)).status,
    "cancelled",
  );
});

Deno.test("tasks: a quiet long call reports start and finish; a task's reports carry its id; a quick call sends none", async () => {
  await using kit = await hosted();
  const client = await kit.client();
  const plain: { progress: number; message?: string }[] = [];
  const call = client.callTool(
    { name: "hold", arguments: { key: "p" } },
    undefined,
    {
      onprogress: (progress) => plain.push(progress),
    },
  );
  await waitFor(() => plain.length, (n) => n >= 1);
  assert.equal(plain[0].message, "hold is running");
  kit.gates.release("p");
  await call;
  assert.equal(plain.length, 2);
  assert.equal(plain[1].message, "hold finished");
  assert.ok(plain[1].progress > plain[0].progress);

  const quick: unknown[] = [];
  await client.callTool({ name: "quick", arguments: {} }, undefined, {
    onprogress: (progress) => quick.push(progress),
  });
  assert.deepEqual(quick, []);

  const reports: { progress: number; message?: string }[] = [];
  const { task } = await startTask(client, "hold", { key: "q" }, {
    onprogress: (progress) => reports.push(progress),
  });
  await waitFor(() => reports.length, (n) => n >= 1);
  assert.equal(reports[0].message, "hold is running");
  kit.gates.release("q");
  await client.experimental.tasks.getTaskResult(
    task.taskId,
    CallToolResultSchema,
  );
  await waitFor(() => reports.length, (n) => n >= 2);
  assert.equal(reports[1].message, "hold finished");
});

Deno.test("tasks: a task's elicitation carries the task's id, and the task is input_required until the user answers", async () => {
  await using kit = await hosted();
  const client = new Client(
    { name: "tasks-test", version: "1.0.0" },
    { capabilities: { elicitation: { form: {} } } },
  );
  let taskId = "";
  const seen: { meta: unknown; status: string; message?: string }[] = [];
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    // The elicitation may come before the handle: its task is named in _meta.
    const related = request.params._meta
      ?.["io.modelcontextprotocol/related-task"];
    const named = typeof related === "object" && related !== null &&
        "taskId" in related
      ? String(related.taskId)
      : "";
    const task = await client.experimental.tasks.getTask(named);
    seen.push({
      meta: request.params._meta,
      status: task.status,
      message: task.statusMessage,
    });
    return { action: "accept", content: {} };
  });
  await client.connect(await connectInProcess(kit.host));
  try {
    const created = await startTask(client, "ask", {});
    taskId = created.task.taskId;
    const result = await client.experimental.tasks.getTaskResult(
      taskId,
      CallToolResultSchema,
    );
    assert.deepEqual(result.content, [{
      type: "text",
      text: "user said accept",
    }]);
    assert.deepEqual(seen, [{
      meta: { "io.modelcontextprotocol/related-task": { taskId } },
      status: "input_required",
      message: "Waiting for the user's answer: Proceed?",
    }]);
    assert.equal(
      (await client.experimental.tasks.getTask(taskId)).status,
      "completed",
    );
  } finally {
    await client.close();
  }
});

Deno.test("tasks: a routed (dynamic) tool that declares taskSupport runs as a task too", async () => {
  await using kit = await hosted(true);
  const client = await kit.client();
  const { tools } = await client.listTools();
  assert.deepEqual(tools.find((t) => t.name === "up__hold")?.execution, {
    taskSupport: "optional",
  });
  const { task } = await startTask(client, "up__hold", { key: "r" });
  kit.gates.release("r");
  const result = await client.experimental.tasks.getTaskResult(
    task.taskId,
    CallToolResultSchema,
  );
  assert.deepEqual(result.content, [{ type: "text", text: "routed r" }]);
  assert.equal(
    (await client.experimental.tasks.getTask(task.taskId)).status,
    "completed",
  );
});

Deno.test("tasks: over the kit's streamable HTTP, the handle, background progress on the session's stream, and the result", async () => {
  const gates = new Gates();
  const { log } = capturedLog("error");
  const host = await HostedServer.start(taskSpec(gates), {
    store: new MemoryStore(),
    log,
    config: {},
    dataDir: "/nonexistent/agentd-tasks-test",
  });
  const endpoint = new McpHttpEndpoint(host, { log, idleTimeoutMs: 60_000 });
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    (request) => endpoint.handle(request),
  );
  const client = new Client({ name: "tasks-http", version: "1.0.0" });
  try {
    await client.connect(
      new StreamableHTTPClientTransport(
        new URL(`http://127.0.0.1:${server.addr.port}/mcp`),
      ),
    );
    const reports: { message?: string }[] = [];
    const { task } = await startTask(client, "hold", { key: "h" }, {
      onprogress: (progress) => reports.push(progress),
    });
    assert.equal(task.status, "working");
    // Sent after the handle was answered: it reaches the client on the session's GET stream.
    await waitFor(() => reports.length, (n) => n >= 1);
    assert.equal(reports[0].message, "hold is running");
    const result = client.experimental.tasks.getTaskResult(
      task.taskId,
      CallToolResultSchema,
    );
    gates.release("h");
    assert.deepEqual((await result).structuredContent, {
      key: "h",
      released: true,
    });
    assert.equal(
      (await client.experimental.tasks.getTask(task.taskId)).status,
      "completed",
    );
    const refused = await rpcError(startTask(client, "quick", {}));
    assert.equal(refused.code, -32601);
  } finally {
    gates.release("h");
    await client.close();
    await endpoint.close();
    await server.shutdown();
    await host.stop(5000);
  }
});
