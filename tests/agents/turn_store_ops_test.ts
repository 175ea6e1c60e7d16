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

Deno.test("turn: the audit records of a turn's calls ride the store's other commits and all land", async () => {
  await using stack = await startStack();
  const guard = stack.hosts.find((host) => host.guard)?.guard;
  assert.ok(guard, "the servers share a policy guard");
  const reply = await stack.request("POST", "/v1/agents", {
    name: "noted",
    model: "openai/test-model",
    system_prompt: "You keep notes.",
    tools: ["memory__store_memory"],
  });
  assert.equal(reply.status, 201, reply.text);
  await guard.audit.flush();
  const before = (await guard.audit.query()).length;
  // The versions of the turns' own commits (none writes an audit record itself).
  const own = new Set<string>();
  const commit = stack.store.commit.bind(stack.store);
  stack.store.commit = async (op) => {
    const result = await commit(op);
    const audit = op.mutations.some((m) => m.key[1] === "policy");
    if (result.ok && !audit) own.add(result.version);
    return result;
  };
  for (let turn = 0; turn < 3; turn++) {
    stack.model.script([
      {
        tool_calls: [{
          name: "memory__store_memory",
          arguments: { key: `note-${turn}`, value: `note ${turn}` },
        }],
      },
      { text: `noted ${turn}` },
    ]);
    const sent = await stack.request("POST", "/v1/agents/noted/send", {
      message: `remember ${turn}`,
      session_id: "notes",
    });
    assert.equal(sent.status, 200, sent.text);
  }
  await guard.audit.flush();
  // No record is lost by riding: each call of each turn (the history read,
  // the tool call, the append) has its record.
  const records = (await guard.audit.query()).slice(before);
  const tools = records.filter((r) => r.caller === "agent:noted").map((r) =>
    r.tool
  );
  for (
    const tool of [
      "get_conversation_history",
      "store_memory",
      "store_conversation",
    ]
  ) {
    assert.ok(
      tools.filter((name) => name === tool).length >= 3,
      `${tool}: ${JSON.stringify(tools)}`,
    );
  }
  // Records rode the turns' own commits (the entry's, the append's), in
  // the same commit as their writes: one disk sync, not one more each.
  // (A record waiting longer than the audit's delay is committed alone.)
  const page = await stack.store.list(["agentd", "policy", "audit"], {
    limit: 1000,
  });
  const rode = page.entries.filter((entry) => own.has(entry.version));
  assert.ok(
    rode.length > 0,
    `no record rode a turn's commit (${own.size} commits)`,
  );
});
