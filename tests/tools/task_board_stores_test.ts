// The TaskBoard on each real store (Deno KV on disk, PostgreSQL): tasks/list
// pages newest first with an opaque cursor, each caller sees only its own,
// results read back as stored, and a bad cursor is the spec's -32602.

import assert from "node:assert/strict";
import { join } from "node:path";
import { McpError } from "../../platform/mcp_sdk.ts";
import { openKvStore } from "../../platform/store/kv.ts";
import { PgStore } from "../../platform/store/pg.ts";
import type { Store } from "../../platform/store/mod.ts";
import { TaskBoard } from "../../tools/kit/tasks.ts";
import { pgTestIgnore, startPgServer } from "../pg_server.ts";
import { capturedLog, tempDir } from "../helpers.ts";

async function scenario(store: Store): Promise<void> {
  const board = new TaskBoard({ store, log: capturedLog().log });
  await board.start();
  const ids: string[] = [];
  for (let i = 0; i < 55; i++) {
    const record = await board.create({
      server: "s",
      tool: "t",
      caller: { agent: "a" },
    });
    board.run(
      record,
      () => Promise.resolve({ content: [{ type: "text", text: `done ${i}` }] }),
    );
    ids.push(record.taskId);
  }
  const theirs = await board.create({
    server: "s",
    tool: "t",
    caller: { agent: "b" },
  });
  board.run(theirs, () => Promise.resolve({ content: [] }));
  const signal = new AbortController().signal;
  const last = await board.result("s", ids[54], { agent: "a" }, signal);
  assert.deepEqual(last.content, [{ type: "text", text: "done 54" }]);

  const first = await board.list("s", { agent: "a" });
  assert.equal(first.tasks.length, 50);
  assert.deepEqual(
    first.tasks.map((task) => task.taskId),
    ids.toReversed().slice(0, 50),
  );
  assert.ok(first.nextCursor);
  const second = await board.list("s", { agent: "a" }, first.nextCursor);
  assert.deepEqual(
    second.tasks.map((task) => task.taskId),
    ids.toReversed().slice(50),
  );
  assert.equal(second.nextCursor, undefined);
  assert.deepEqual(
    (await board.list("s", { agent: "b" })).tasks.map((task) => task.taskId),
    [theirs.taskId],
  );
  assert.equal((await board.rows({})).length, 56);
  await assert.rejects(
    board.result("s", ids[0], { agent: "b" }, signal),
    (error) => error instanceof McpError && error.code === -32602,
  );
  await assert.rejects(
    board.list("s", { agent: "a" }, "not-a-cursor"),
    (error) => error instanceof McpError && error.code === -32602,
  );
  await board.stopServer("s");
}

Deno.test("task board on Deno KV: pages, callers, results, cursors", async () => {
  await using dir = await tempDir();
  const store = await openKvStore(join(dir.path, "store.kv"));
  try {
    await scenario(store);
  } finally {
    await store.close();
  }
});

Deno.test({
  name: "task board on PostgreSQL: pages, callers, results, cursors",
  ignore: pgTestIgnore(),
  async fn() {
    const server = await startPgServer();
    try {
      const url = await server.createDatabase("tasks");
      const store = await PgStore.connect({ url, password: server.password });
      try {
        await scenario(store);
      } finally {
        await store.close();
      }
    } finally {
      await server.destroy();
    }
  },
});
