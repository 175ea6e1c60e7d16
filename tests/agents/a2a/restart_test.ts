// Tasks a dead process left running are marked failed at the next start,
// not left "working" forever.

import assert from "node:assert/strict";
import { A2AService } from "../../../agents/a2a/mod.ts";
import { sequence, type TaskState } from "../../../agents/a2a/tasks.ts";
import { MemoryStore } from "../../../platform/store/memory.ts";
import { fakeHost, silentLog } from "./fixture.ts";

function task(id: string, state: TaskState) {
  const now = new Date().toISOString();
  return {
    id,
    context_id: `ctx-${id}`,
    agent_id: "agt_echo",
    agent: "echo",
    state,
    status_message: null,
    status_timestamp: now,
    history: [{ message_id: `m-${id}`, role: "user" as const, text: "hi" }],
    artifacts: [],
    from: null,
    error: null,
    seq: sequence(),
    created_at: now,
    updated_at: now,
  };
}

Deno.test("a2a start: tasks left submitted or working by a dead process are marked failed; finished ones stay", async () => {
  const store = new MemoryStore();
  const before = new A2AService({ host: fakeHost(store), log: silentLog });
  await before.tasks.create(task("t-working", "working"));
  await before.tasks.create(task("t-submitted", "submitted"));
  await before.tasks.create(task("t-done", "completed"));

  const after = new A2AService({ host: fakeHost(store), log: silentLog });
  await after.start();
  for (const id of ["t-working", "t-submitted"]) {
    const stored = await after.tasks.get(id);
    assert.equal(stored?.task.state, "failed", id);
    assert.match(stored?.task.error ?? "", /interrupted/);
  }
  assert.equal((await after.tasks.get("t-done"))?.task.state, "completed");
  const listed = await after.tasks.list("agt_echo", { state: "working" }, {
    page_size: 10,
  });
  assert.equal(listed.tasks.length, 0, "the index agrees");
});
