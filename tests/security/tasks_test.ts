// Issue 36 (MCP tasks), as an attacker holding one agent's token: a task is
// its caller's alone. Another agent's task id in tasks/get, tasks/result and
// tasks/cancel, spelled however, is "not found"; tasks/list shows it none,
// whatever cursor it crafts (another caller's own, garbage, one aimed at the
// store's other keys); another daemon on the same store answers the same;
// the task's status and progress reach only the session that asked, and a
// session another identity opened is refused. The task server is the one
// tests/tools/tasks_test.ts uses (tests/tools/tasks_harness.ts); the daemon
// half (agent tokens on `agentd serve`, /admin/tasks) is
// tests/security/tasks_daemon_test.ts.

import assert from "node:assert/strict";
import {
  CallToolResultSchema,
  Client,
  StreamableHTTPClientTransport,
} from "../../platform/mcp_sdk.ts";
import { join } from "node:path";
import { MemoryStore } from "../../platform/store/memory.ts";
import { openKvStore } from "../../platform/store/kv.ts";
import {
  decodeCursor,
  encodeCursor,
  type Store,
} from "../../platform/store/mod.ts";
import { McpHttpEndpoint } from "../../tools/kit/transport/http_server.ts";
import { capturedLog, tempDir, waitFor } from "../helpers.ts";
import { hosted, rpcError, startTask } from "../tools/tasks_harness.ts";

/** Every way a caller names a task: each must be "not found" for mallory. */
async function refusedEverywhere(
  client: Client,
  id: string,
): Promise<void> {
  // One at a time: a wrongly answered get fails here before a result could block.
  for (
    const attempt of [
      () => client.experimental.tasks.getTask(id),
      () => client.experimental.tasks.getTaskResult(id, CallToolResultSchema),
      () => client.experimental.tasks.cancelTask(id),
    ]
  ) {
    const refused = await rpcError(attempt());
    assert.equal(refused.code, -32602, `${id}: ${refused.message}`);
    assert.match(refused.message, /Task not found/);
  }
}

Deno.test("security tasks: an agent's task is its own; another agent cannot get, wait for, cancel or list it; the operator can", async () => {
  await using kit = await hosted();
  const alice = await kit.client({ agent: "alice" });
  const mallory = await kit.client({ agent: "mallory" });
  const operator = await kit.client();
  const { task } = await startTask(alice, "hold", { key: "c" });
  const id = task.taskId;
  await refusedEverywhere(mallory, id);
  assert.deepEqual((await mallory.experimental.tasks.listTasks()).tasks, []);
  // Nor an operator's task: an agent sees its own only.
  const mine = await startTask(operator, "hold", { key: "d" });
  await refusedEverywhere(alice, mine.task.taskId);
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

Deno.test("security tasks: spellings of another agent's task id reach nothing", async () => {
  await using kit = await hosted();
  const alice = await kit.client({ agent: "alice" });
  const mallory = await kit.client({ agent: "mallory" });
  kit.gates.release("e");
  const { task } = await startTask(alice, "hold", { key: "e" });
  const id = task.taskId;
  await waitFor(
    () => alice.experimental.tasks.getTask(id),
    (now) => now.status === "completed",
  );
  for (
    const spelled of [
      id,
      id.toUpperCase(),
      ` ${id}`,
      `${id} `,
      `${id}\u0000`,
      `${id}\u200b`,
      id.normalize("NFKC").replace("-", "\u2010"),
      `task/${id}`,
      `${id}/../${id}`,
      id.slice(0, 9), // the time part alone
      `${id}${"x".repeat(300)}`,
    ]
  ) {
    await refusedEverywhere(mallory, spelled);
  }
  // The id itself is alice's: she reads her result, so the spellings were refused for being mallory's.
  const own = await alice.experimental.tasks.getTaskResult(
    id,
    CallToolResultSchema,
  );
  assert.deepEqual(own.structuredContent, { key: "e", released: true });
});

Deno.test("security tasks: no tasks/list cursor reaches another caller's tasks", async () => {
  await using kit = await hosted();
  const alice = await kit.client({ agent: "alice" });
  const mallory = await kit.client({ agent: "mallory" });
  kit.gates.release("f");
  // More than one page (50) of alice's tasks, so her listing has a cursor.
  const ids: string[] = [];
  for (let i = 0; i < 60; i++) {
    ids.push((await startTask(alice, "hold", { key: "f" })).task.taskId);
  }
  const first = await alice.experimental.tasks.listTasks();
  assert.equal(first.tasks.length, 50);
  assert.ok(first.nextCursor, "alice's listing goes on");
  const rest = await alice.experimental.tasks.listTasks(first.nextCursor);
  assert.equal(first.tasks.length + rest.tasks.length, 60);

  // Alice's own cursor, or one aimed anywhere in the store, shows mallory nothing of hers.
  const crafted = [
    first.nextCursor,
    `tasks.${encodeCursor("")}`,
    `tasks.${encodeCursor("\xff")}`,
    `tasks.${encodeCursor("\xff".repeat(64))}`,
  ];
  for (const cursor of crafted) {
    let listed: string[];
    try {
      listed = (await mallory.experimental.tasks.listTasks(cursor)).tasks.map(
        (t) => t.taskId,
      );
    } catch (error) {
      assert.equal((await rpcError(Promise.reject(error))).code, -32602);
      continue;
    }
    assert.deepEqual(listed, [], `cursor ${cursor}`);
  }
  // Garbage is refused as the spec says.
  for (const cursor of ["x", "tasks.", "tasks.!!", ids[0]]) {
    const refused = await rpcError(
      mallory.experimental.tasks.listTasks(cursor),
    );
    assert.equal(refused.code, -32602, cursor);
  }
});

async function pagesPastOthers(store: Store): Promise<void> {
  await using kit = await hosted(false, store);
  const alice = await kit.client({ agent: "alice" });
  const mallory = await kit.client({ agent: "mallory" });
  kit.gates.release("f");
  const own = (await startTask(mallory, "hold", { key: "f" })).task.taskId;
  // More of alice's (newer) than one listing reads past (20 reads of 50).
  const hers = new Set<string>();
  for (let i = 0; i < 1010; i++) {
    hers.add((await startTask(alice, "hold", { key: "f" })).task.taskId);
  }
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 5; page++) {
    const listed = await mallory.experimental.tasks.listTasks(cursor);
    seen.push(...listed.tasks.map((task) => task.taskId));
    cursor = listed.nextCursor;
    if (cursor === undefined) break;
    const named = decodeCursor(cursor.slice("tasks.".length));
    for (const id of hers) {
      assert.ok(!named.includes(id), `the cursor names alice's task ${id}`);
    }
  }
  assert.deepEqual(seen, [own]);
}

Deno.test("security tasks: a tasks/list cursor names no task of another caller's, and paging past theirs still finds one's own", async () => {
  await pagesPastOthers(new MemoryStore());
  // The cursor past them is built, not the store's: the same on Deno KV.
  await using dir = await tempDir();
  const kv = await openKvStore(join(dir.path, "tasks.kv"));
  try {
    await pagesPastOthers(kv);
  } finally {
    await kv.close();
  }
});

Deno.test("security tasks: another daemon on the same store judges the caller the same", async () => {
  const store = new MemoryStore();
  await using one = await hosted(false, store);
  await using two = await hosted(false, store);
  const alice = await one.client({ agent: "alice" });
  const { task } = await startTask(alice, "hold", { key: "g" });
  const mallory = await two.client({ agent: "mallory" });
  await refusedEverywhere(mallory, task.taskId);
  assert.deepEqual((await mallory.experimental.tasks.listTasks()).tasks, []);
  // The second daemon does know it: alice and the operator read it there.
  const aliceThere = await two.client({ agent: "alice" });
  assert.equal(
    (await aliceThere.experimental.tasks.getTask(task.taskId)).status,
    "working",
  );
  const operatorThere = await two.client();
  assert.deepEqual(
    (await operatorThere.experimental.tasks.listTasks()).tasks.map((t) =>
      t.taskId
    ),
    [task.taskId],
  );
  one.gates.release("g");
});

Deno.test("security tasks: over streamable HTTP, a task's status and progress reach only its own session; another identity cannot use that session", async () => {
  const { log } = capturedLog("error");
  await using kit = await hosted();
  const endpoint = new McpHttpEndpoint(kit.host, {
    log,
    idleTimeoutMs: 60_000,
  });
  // The identity as the daemon's caller guard would attach it from a token.
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    (request) => {
      const agent = request.headers.get("x-test-agent");
      return endpoint.handle(request, {
        caller: agent === null ? {} : { agent },
      });
    },
  );
  const url = new URL(`http://127.0.0.1:${server.addr.port}/mcp`);
  const connect = async (agent: string) => {
    const client = new Client({ name: agent, version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { "x-test-agent": agent } },
    });
    await client.connect(transport);
    const heard: string[] = [];
    client.fallbackNotificationHandler = (notification) => {
      heard.push(JSON.stringify(notification));
      return Promise.resolve();
    };
    return { client, transport, heard };
  };
  const alice = await connect("alice");
  const mallory = await connect("mallory");
  try {
    const reports: string[] = [];
    const { task } = await startTask(alice.client, "hold", { key: "h" }, {
      onprogress: (progress) => reports.push(progress.message ?? ""),
    });
    await waitFor(() => reports.length, (n) => n >= 1);
    kit.gates.release("h");
    await alice.client.experimental.tasks.getTaskResult(
      task.taskId,
      CallToolResultSchema,
    );
    // Alice heard her task end on her session's stream.
    await waitFor(
      () => alice.heard.filter((line) => line.includes(task.taskId)),
      (lines) => lines.some((line) => line.includes('"completed"')),
    );
    // A round trip on mallory's session after all of it: nothing of alice's reached it.
    await mallory.client.ping();
    assert.deepEqual(
      mallory.heard.filter((line) => line.includes(task.taskId)),
      [],
    );

    // Alice's session id under mallory's identity: refused before any method runs.
    const session = alice.transport.sessionId;
    assert.ok(session);
    for (const method of ["GET", "POST"]) {
      const response: Response = await fetch(url, {
        method,
        headers: {
          "x-test-agent": "mallory",
          "mcp-session-id": session,
          "mcp-protocol-version": "2025-11-25",
          accept: "application/json, text/event-stream",
          "content-type": "application/json",
        },
        body: method === "POST"
          ? JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "tasks/list",
            params: {},
          })
          : undefined,
      });
      assert.equal(response.status, 403, method);
      assert.match(await response.text(), /opened by another identity/);
    }
  } finally {
    kit.gates.release("h");
    await alice.client.close();
    await mallory.client.close();
    await endpoint.close();
    await server.shutdown();
  }
});
