import assert from "node:assert/strict";
import { MemoryStore } from "../../platform/store/memory.ts";
import { scoped } from "../../platform/store/mod.ts";
import { openKvStore } from "../../platform/store/kv.ts";
import { join } from "node:path";
import { tempDir } from "../helpers.ts";
import { AuditTrail } from "../../tools/kit/policy/audit.ts";

function record(i: number) {
  return {
    caller: "local",
    session: null,
    server: "memory",
    tool: "store_memory",
    args: { n: i },
    decision: "allowed",
    rule: "default",
    decided_by: null,
    outcome: "ok" as const,
    duration_ms: 1,
  };
}

/** Yields to the event loop once (a macrotask), as between two sequential calls. */
const nextTurn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

Deno.test("audit: records of sequential calls wait to share one commit; flush writes them at once", async () => {
  const store = new MemoryStore();
  let commits = 0;
  const commit = store.commit.bind(store);
  store.commit = (op) => {
    commits++;
    return commit(op);
  };
  // A delay no test run reaches: only flush() may commit here.
  const trail = new AuditTrail(store, () => 30, Date.now, 3_600_000);
  const written: Promise<void>[] = [];
  for (let i = 0; i < 5; i++) {
    written.push(trail.append(record(i)));
    await nextTurn();
  }
  assert.equal(commits, 0, "no commit per call");
  await trail.flush();
  assert.equal(commits, 1);
  await Promise.all(written);
  const stored = await trail.query();
  assert.deepEqual(
    stored.map((r) => r.args),
    [0, 1, 2, 3, 4].map((n) => ({ n })),
  );
});

Deno.test("audit: a full batch commits without waiting for the delay", async () => {
  const store = new MemoryStore();
  let commits = 0;
  const commit = store.commit.bind(store);
  store.commit = (op) => {
    commits++;
    return commit(op);
  };
  const trail = new AuditTrail(store, () => 30, Date.now, 3_600_000);
  await Promise.all(
    Array.from({ length: 50 }, (_, i) => trail.append(record(i))),
  );
  assert.equal(commits, 1);
  // One more waits for others, or for a flush (as shutdown does).
  const last = trail.append(record(50));
  await nextTurn();
  assert.equal(commits, 1);
  await trail.flush();
  await last;
  assert.equal(commits, 2);
  assert.equal((await trail.query()).length, 51);
});

Deno.test("audit: a record that comes in during a commit waits for others instead of a commit of its own right after", async () => {
  const store = new MemoryStore();
  let commits = 0;
  const gate = Promise.withResolvers<void>();
  const commit = store.commit.bind(store);
  store.commit = async (op) => {
    commits++;
    // Begun now (records waiting board it now), answered at the gate.
    const result = commit(op);
    await gate.promise;
    return await result;
  };
  // A delay no test run reaches: after the full batch, only flush() may commit.
  const trail = new AuditTrail(store, () => 30, Date.now, 3_600_000);
  const batch = Array.from({ length: 50 }, (_, i) => trail.append(record(i)));
  assert.equal(commits, 1, "a full batch commits at once");
  const late = trail.append(record(50));
  gate.resolve();
  await Promise.all(batch);
  await nextTurn();
  assert.equal(commits, 1, "the late record waits for the delay");
  await trail.flush();
  await late;
  assert.equal(commits, 2);
  assert.equal((await trail.query()).length, 51);
});

Deno.test("audit: waiting records board the next commit made on the store (another view's), not one of their own", async () => {
  const store = new MemoryStore();
  const commits: string[][] = [];
  const commit = store.commit.bind(store);
  store.commit = (op) => {
    commits.push(op.mutations.map((m) => String(m.key[0])));
    return commit(op);
  };
  const trail = new AuditTrail(
    scoped(store, ["agentd", "policy"]),
    () => 30,
    Date.now,
    3_600_000,
  );
  const conversation = scoped(store, ["svc-memory"]);
  const written = [trail.append(record(0)), trail.append(record(1))];
  await nextTurn();
  assert.deepEqual(commits, [], "the records wait");
  // A conversation's append: the records ride it.
  const appended = await conversation.commit({
    mutations: [{ type: "set", key: ["s", "talk"], value: { count: 2 } }],
  });
  assert.ok(appended.ok);
  await Promise.all(written);
  assert.deepEqual(commits, [["svc-memory"]], "one commit for both");
  const stored = await trail.query();
  assert.deepEqual(stored.map((r) => r.args), [{ n: 0 }, { n: 1 }]);
  assert.equal(commits.length, 1, "nothing was left to flush");

  // A commit whose check fails leaves them waiting; flush writes them.
  const late = trail.append(record(2));
  await nextTurn();
  const failed = await conversation.commit({
    checks: [{ key: ["s", "talk"], version: null }],
    mutations: [{ type: "set", key: ["s", "talk"], value: { count: 3 } }],
  });
  assert.equal(failed.ok, false);
  await trail.flush();
  await late;
  assert.deepEqual((await trail.query()).map((r) => r.args), [
    { n: 0 },
    { n: 1 },
    { n: 2 },
  ]);
  assert.equal(commits.length, 3, "the failed commit, then the flush's");
});

Deno.test("audit: flush waits for records on board a commit still in flight", async () => {
  await using dir = await tempDir();
  const store = await openKvStore(join(dir.path, "store.kv"));
  try {
    let commits = 0;
    const commit = store.commit.bind(store);
    store.commit = (op) => {
      commits++;
      return commit(op);
    };
    const trail = new AuditTrail(store, () => 30, Date.now, 3_600_000);
    const written = trail.append(record(0));
    await nextTurn();
    // Another commit takes the record on board; flush starts while it is in flight.
    let otherDone = false;
    const other = store.commit({
      mutations: [{ type: "set", key: ["x"], value: 1 }],
    }).then(() => otherDone = true);
    await trail.flush();
    assert.ok(
      otherDone,
      "flush resolved only after the commit the record was on",
    );
    assert.equal(commits, 1, "flush made no commit of its own");
    await Promise.all([other, written]);
    assert.equal((await trail.query()).length, 1);
  } finally {
    await store.close();
  }
});
