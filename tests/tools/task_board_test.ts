// The TaskBoard on a shared store, with a clock the test moves: tasks
// expire with their ttl and are swept; a task whose daemon died (its
// process gone on this host, or its lease not renewed) is failed with the
// reason, by another board on the same store; a live peer's is left alone.

import assert from "node:assert/strict";
import { MemoryStore } from "../../platform/store/memory.ts";
import { TaskBoard } from "../../tools/kit/tasks.ts";
import { capturedLog } from "../helpers.ts";

function clock(start = Date.parse("2026-12-07T10:00:00Z")) {
  let now = start;
  return { now: () => now, advance: (ms: number) => now += ms };
}

Deno.test("task board: a task expires with its ttl, then it is gone and swept from the store", async () => {
  const store = new MemoryStore();
  const time = clock();
  const board = new TaskBoard({
    store,
    log: capturedLog().log,
    clock: time.now,
  });
  await board.start();
  const record = await board.create({
    server: "s",
    tool: "t",
    caller: {},
    ttl: 60_000,
  });
  board.run(
    record,
    () => Promise.resolve({ content: [{ type: "text", text: "done" }] }),
  );
  const done = await board.result(
    "s",
    record.taskId,
    {},
    new AbortController().signal,
  );
  assert.deepEqual(done.content, [{ type: "text", text: "done" }]);
  assert.equal((await board.get("s", record.taskId, {})).ttl, 60_000);

  time.advance(60_001);
  await assert.rejects(board.get("s", record.taskId, {}), /Task not found/);
  assert.deepEqual((await board.list("s", {})).tasks, []);
  // A later create sweeps what expired (at most once a minute).
  await board.create({ server: "s", tool: "t", caller: {} });
  await waitEmpty(store, record.taskId);
  await board.stopServer("s");
});

async function waitEmpty(store: MemoryStore, id: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const [task, result] = await store.getMany([["task", id], ["result", id]]);
    if (task === null && result === null) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("the expired task is still in the store");
}

Deno.test("task board: another board fails a dead daemon's task with the reason, and leaves a live one's", async () => {
  const store = new MemoryStore();
  const time = clock();
  const { log } = capturedLog();
  const dead = new TaskBoard({ store, log, clock: time.now, renewMs: 1000 });
  const live = new TaskBoard({ store, log, clock: time.now, renewMs: 1000 });
  const gate = Promise.withResolvers<void>();
  const hang = async () => {
    await gate.promise;
    return { content: [] };
  };
  const orphan = await dead.create({
    server: "s",
    tool: "wait",
    caller: { agent: "a" },
  });
  const alive = await live.create({
    server: "s",
    tool: "wait",
    caller: { agent: "a" },
  });
  live.run(alive, hang);
  // `dead` never runs its task and stops renewing: its lease goes stale.
  const other = new TaskBoard({ store, log, clock: time.now, renewMs: 1000 });
  assert.equal((await other.get("s", orphan.taskId, {})).status, "working");
  // A live peer's task (its lease fresh) is left alone.
  assert.equal((await other.get("s", alive.taskId, {})).status, "working");
  time.advance(3_001);
  const failed = await other.get("s", orphan.taskId, { agent: "a" });
  assert.equal(failed.status, "failed");
  assert.match(
    failed.statusMessage ?? "",
    /stopped answering \(no heartbeat since .*\) while it was working; call wait again/,
  );
  const result = await other.result(
    "s",
    orphan.taskId,
    {},
    new AbortController().signal,
  );
  assert.equal(result.isError, true);
  // The live board's own task is its own business: it is not failed by itself.
  assert.equal((await live.get("s", alive.taskId, {})).status, "working");
  gate.resolve();
  assert.deepEqual(
    (await live.result("s", alive.taskId, {}, new AbortController().signal))
      .content,
    [],
  );
  await live.stopServer("s");
});

Deno.test("task board: a task of a process gone from this host is failed at the next start: the daemon restarted", async () => {
  const store = new MemoryStore();
  const { log } = capturedLog();
  const gone = new Deno.Command("true").spawn();
  await gone.status;
  const record = {
    taskId: "0000000000-restart",
    status: "input_required",
    statusMessage: "Waiting for a person to approve s.t (approval 1234abcd)",
    createdAt: new Date().toISOString(),
    lastUpdatedAt: new Date().toISOString(),
    ttl: 3_600_000,
    pollInterval: 1000,
    server: "s",
    tool: "t",
    caller: "local",
    lease: {
      owner: "a-previous-run",
      host: Deno.hostname(),
      pid: gone.pid,
      heartbeat_at: new Date().toISOString(),
    },
  };
  await store.set(["task", record.taskId], record);
  const board = new TaskBoard({ store, log });
  await board.start();
  const entry = await store.get(["task", record.taskId]);
  const stored = entry?.value;
  assert.ok(stored && typeof stored === "object" && !Array.isArray(stored));
  assert.equal(stored.status, "failed");
  assert.equal(
    stored.statusMessage,
    "The daemon restarted while this task waited for input (Waiting for a person to approve s.t (approval 1234abcd)); call t again",
  );
});

Deno.test("task board: a task cancelled through another daemon stops where it runs at its next lease renewal", async () => {
  const store = new MemoryStore();
  const { log } = capturedLog();
  const runner = new TaskBoard({ store, log, renewMs: 20 });
  const other = new TaskBoard({ store, log, renewMs: 20 });
  const record = await runner.create({ server: "s", tool: "t", caller: {} });
  const stopped = Promise.withResolvers<string>();
  runner.run(record, (signal) =>
    new Promise((_, reject) => {
      signal.addEventListener("abort", () => {
        stopped.resolve(String(signal.reason));
        reject(new Error("stopped"));
      }, { once: true });
    }));
  const cancelled = await other.cancel("s", record.taskId, {});
  assert.equal(cancelled.status, "cancelled");
  assert.equal(await stopped.promise, "The task is cancelled");
  assert.equal((await runner.get("s", record.taskId, {})).status, "cancelled");
  await runner.stopServer("s");
});
