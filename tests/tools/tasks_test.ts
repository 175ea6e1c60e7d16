// MCP tasks in the kit (2025-11-25, as @modelcontextprotocol/sdk 1.32.2 has
// them): a tool that declares taskSupport runs as a task when asked; the
// handle comes at once, tasks/result blocks until the end and answers what
// the plain call answers; cancel aborts the work; a task is its caller's
// alone; quiet long calls report progress; the kit's streamable HTTP and
// in-process links, and a server's routed (dynamic) tools, all serve it.

import assert from "node:assert/strict";
import { z } from "zod";
import { HostedServer } from "../../tools/kit/host.ts";
import { connectInProcess } from "../../tools/kit/transport/sdk_server.ts";
import { McpHttpEndpoint } from "../../tools/kit/transport/http_server.ts";
import {
  type CallContext,
  defineServer,
  json,
  text,
  toolDefiner,
  ToolError,
} from "../../tools/kit/mod.ts";
import {
  CallToolResultSchema,
  Client,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  McpError,
  StreamableHTTPClientTransport,
} from "../../platform/mcp_sdk.ts";
import { MemoryStore } from "../../platform/store/memory.ts";
import type { Caller } from "../../platform/identity.ts";
import { capturedLog, waitFor } from "../helpers.ts";

/** Gates the `hold` calls wait on, by key; and what each call saw. */
class Gates {
  readonly #open = new Map<string, PromiseWithResolvers<void>>();
  readonly aborted = new Set<string>();
  readonly started = new Set<string>();

  gate(key: string): PromiseWithResolvers<void> {
    let gate = this.#open.get(key);
    if (!gate) {
      gate = Promise.withResolvers<void>();
      this.#open.set(key, gate);
    }
    return gate;
  }

  release(key: string): void {
    this.gate(key).resolve();
  }

  async wait(key: string, call: CallContext): Promise<void> {
    this.started.add(key);
    const gate = this.gate(key);
    const aborted = Promise.withResolvers<never>();
    const abort = () => {
      this.aborted.add(key);
      aborted.reject(new ToolError(`hold ${key} was aborted`));
    };
    call.signal.addEventListener("abort", abort, { once: true });
    try {
      await Promise.race([gate.promise, aborted.promise]);
    } finally {
      call.signal.removeEventListener("abort", abort);
    }
  }
}

const tool = toolDefiner<Gates>();

function taskSpec(gates: Gates, routed = false) {
  return defineServer<Gates>({
    id: "tasker",
    namespace: "svc-tasker",
    title: "Tasker",
    version: "1.0.0",
    aggregates: routed,
    tools: [
      tool({
        name: "hold",
        description: "Waits until the test releases its key",
        input: z.object({ key: z.string() }),
        output: z.object({ key: z.string(), released: z.boolean() }),
        taskSupport: "optional",
        touches: [],
        async handle(ctx, { key }, call) {
          await ctx.wait(key, call);
          return json({ key, released: true });
        },
      }),
      tool({
        name: "ask",
        description:
          "Asks the user through the client, then answers what they said",
        input: z.object({}),
        taskSupport: "optional",
        touches: [],
        async handle(_ctx, _args, call) {
          const answer = await call.elicit({
            message: "Proceed?",
            requestedSchema: { type: "object", properties: {} },
          });
          return text(`user said ${answer.action}`);
        },
      }),
      tool({
        name: "quick",
        description: "Answers at once; no task support",
        input: z.object({}),
        touches: [],
        handle: () => Promise.resolve(text("quick")),
      }),
    ],
    start: () =>
      Promise.resolve({
        context: gates,
        // A routed tool as an aggregator adds it (the gateway's upstream tools).
        dynamicTools: routed
          ? {
            list: () => [{
              name: "up__hold",
              description: "A routed hold",
              inputSchema: { type: "object" },
              execution: { taskSupport: "optional" },
            }],
            has: (name: string) => name === "up__hold",
            async call(
              _name: string,
              args: Record<string, unknown>,
              call: CallContext,
            ) {
              const key = String(args.key);
              await gates.wait(key, call);
              return text(`routed ${key}`);
            },
          }
          : undefined,
      }),
  });
}

async function hosted(routed = false) {
  const gates = new Gates();
  const { log } = capturedLog("error");
  const host = await HostedServer.start(taskSpec(gates, routed), {
    store: new MemoryStore(),
    log,
    config: {},
    dataDir: "/nonexistent/agentd-tasks-test",
  });
  const clients: Client[] = [];
  return {
    host,
    gates,
    async client(caller: Caller = {}): Promise<Client> {
      const client = new Client({ name: "tasks-test", version: "1.0.0" });
      await client.connect(await connectInProcess(host, caller));
      clients.push(client);
      return client;
    },
    async [Symbol.asyncDispose]() {
      for (const key of ["a", "b", "c", "d", "e", "p", "q", "r", "h"]) {
        gates.release(key);
      }
      await Promise.all(clients.map((client) => client.close()));
      await host.stop(5000);
    },
  };
}

function startTask(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  options: {
    onprogress?: (progress: { progress: number; message?: string }) => void;
  } = {},
) {
  return client.request(
    {
      method: "tools/call",
      params: { name, arguments: args, task: { ttl: 120_000 } },
    },
    CreateTaskResultSchema,
    options,
  );
}

async function rpcError(promise: Promise<unknown>): Promise<McpError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof McpError) return error;
    throw error;
  }
  throw new Error("expected a JSON-RPC error, got a result");
}

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

Deno.test("tasks: an agent's task is its own; another agent cannot get, wait for, cancel or list it; the operator can", async () => {
  await using kit = await hosted();
  const alice = await kit.client({ agent: "alice" });
  const mallory = await kit.client({ agent: "mallory" });
  const operator = await kit.client();
  const { task } = await startTask(alice, "hold", { key: "c" });
  const id = task.taskId;
  for (
    const attempt of [
      mallory.experimental.tasks.getTask(id),
      mallory.experimental.tasks.getTaskResult(id, CallToolResultSchema),
      mallory.experimental.tasks.cancelTask(id),
    ]
  ) {
    const refused = await rpcError(attempt);
    assert.equal(refused.code, -32602);
    assert.match(refused.message, /Task not found/);
  }
  assert.deepEqual((await mallory.experimental.tasks.listTasks()).tasks, []);
  // Nor an operator's task: an agent sees its own only.
  const mine = await startTask(operator, "hold", { key: "d" });
  assert.equal(
    (await rpcError(alice.experimental.tasks.getTask(mine.task.taskId))).code,
    -32602,
  );
  assert.deepEqual(
    (await alice.experimental.tasks.listTasks()).tasks.map((t) => t.taskId),
    [id],
  );
  assert.equal((await alice.experimental.tasks.getTask(id)).status, "working");
  assert.deepEqual(
    (await operator.experimental.tasks.listTasks()).tasks.map((t) => t.taskId),
    [mine.task.taskId, id],
  );
  assert.equal(
    (await operator.experimental.tasks.getTask(id)).status,
    "working",
  );
  // Mallory's cancel did nothing: alice's call still runs and completes.
  kit.gates.release("c");
  const result = await alice.experimental.tasks.getTaskResult(
    id,
    CallToolResultSchema,
  );
  assert.deepEqual(result.structuredContent, { key: "c", released: true });
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
