// The deadlines of direct-link calls on one timer (tools/kit/call_deadlines.ts):
// each fires once, not before its time, in the order of their times whatever
// the order of adding; a cancelled one never; and no timer is left when
// nothing is pending (the test sanitizer fails a test that leaves one).

import assert from "node:assert/strict";
import { CallDeadlines } from "../../tools/kit/call_deadlines.ts";
import { waitFor } from "../helpers.ts";

/** Deadlines, and when (ms after the start) each one fired. */
function deadlines() {
  const start = performance.now();
  const all = new CallDeadlines();
  const fired: { name: string; at: number }[] = [];
  const add = (name: string, ms: number) =>
    all.add(ms, () => fired.push({ name, at: performance.now() - start }));
  return { all, fired, add };
}

Deno.test("call deadlines: each fires once and not early, an earlier one added later first", async () => {
  const { all, fired, add } = deadlines();
  add("late", 60);
  add("early", 10); // earlier than the timer set for "late": the timer moves
  add("middle", 30);
  await waitFor(() => fired.length, (n) => n === 3);
  assert.deepEqual(fired.map((f) => f.name), ["early", "middle", "late"]);
  for (const { name, at } of fired) {
    const due = { early: 10, middle: 30, late: 60 }[name] ?? 0;
    // Timers round to whole milliseconds: at most 1 ms early.
    assert.ok(at >= due - 1, `${name} fired at ${at} ms, due at ${due}`);
  }
  assert.equal(all.size, 0);
});

Deno.test("call deadlines: a cancelled deadline never fires; the last cancel clears the timer", async () => {
  const { all, fired, add } = deadlines();
  const cancel = add("cancelled", 5);
  add("sentinel", 20);
  cancel();
  await waitFor(() => fired.length, (n) => n === 1);
  assert.deepEqual(fired.map((f) => f.name), ["sentinel"]);
  // One pending and cancelled: no timer is left behind (sanitizer).
  add("never", 60_000)();
  assert.equal(all.size, 0);
});
