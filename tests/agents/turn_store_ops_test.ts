// What one turn asks of the store, counted: the conversation's history read
// and its append, for a conversation this process already served (its history
// kept by the memory server, checked by the session record's version).

import assert from "node:assert/strict";
import type { StoreKey } from "../../platform/store/mod.ts";
import { startStack } from "./stack.ts";

interface Counts {
  lists: number;
  reads: number;
  commits: number;
}

/** Counts the store calls that touch `session`'s records (messages and session record). */
function countSession(
  store: object,
  session: string,
): Counts {
  const counts: Counts = { lists: 0, reads: 0, commits: 0 };
  const touches = (key: unknown) => Array.isArray(key) && key.includes(session);
  const wrap = (name: string, count: (args: unknown[]) => void) => {
    const original: unknown = Reflect.get(store, name);
    if (typeof original !== "function") throw new Error(`no ${name}`);
    Reflect.set(store, name, (...args: unknown[]) => {
      count(args);
      return Reflect.apply(original, store, args);
    });
  };
  wrap("get", ([key]) => {
    if (touches(key)) counts.reads++;
  });
  wrap("getMany", ([keys]) => {
    if (Array.isArray(keys) && keys.some(touches)) counts.reads++;
  });
  wrap("list", ([prefix]) => {
    if (touches(prefix)) {
      counts.reads++;
      counts.lists++;
    }
  });
  wrap("commit", ([op]) => {
    const mutations = typeof op === "object" && op !== null
      ? Reflect.get(op, "mutations")
      : undefined;
    if (
      Array.isArray(mutations) &&
      mutations.some((m: { key: StoreKey }) => touches(m.key))
    ) counts.commits++;
  });
  return counts;
}

Deno.test("turn: a conversation's turns read its session record once and list nothing; one commit each, before the reply", async () => {
  await using stack = await startStack();
  const reply = await stack.request("POST", "/v1/agents", {
    name: "counted",
    model: "openai/test-model",
    system_prompt: "You answer briefly.",
  });
  assert.equal(reply.status, 201, reply.text);
  const counts = countSession(stack.store, "talk-1");
  for (let turn = 0; turn < 3; turn++) {
    stack.model.script([{ text: `answer ${turn}` }]);
    const before = { ...counts };
    const sent = await stack.request("POST", "/v1/agents/counted/send", {
      message: `question ${turn}`,
      session_id: "talk-1",
    });
    assert.equal(sent.status, 200, sent.text);
    // The append: its commit is made before the reply (the turn awaits it).
    assert.equal(counts.commits - before.commits, 1, `turn ${turn}: commits`);
    assert.equal(counts.reads - before.reads, 1, `turn ${turn}: reads`);
    assert.equal(counts.lists - before.lists, 0, `turn ${turn}: lists`);
  }
  // The history the model got is the whole conversation, in order.
  const last = stack.model.requests[2].body.messages;
  assert.deepEqual(last, [
    { role: "system", content: "You answer briefly." },
    { role: "user", content: "question 0" },
    { role: "assistant", content: "answer 0" },
    { role: "user", content: "question 1" },
    { role: "assistant", content: "answer 1" },
    { role: "user", content: "question 2" },
  ]);
});
