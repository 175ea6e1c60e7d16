// Policy evaluation: first matching rule wins, argument globs, caller kinds,
// and the safe defaults (agents always; local callers only when strict).

import assert from "node:assert/strict";
import {
  evaluate,
  globMatch,
  PolicyConfig,
  type ToolFacts,
} from "../../platform/policy.ts";
import { MemoryStore } from "../../platform/store/memory.ts";
import { AuditTrail, redactArgs } from "../../tools/kit/policy/audit.ts";
import { Guard } from "../../tools/kit/policy/guard.ts";
import type { CallContext } from "../../tools/kit/mod.ts";
import { capturedLog } from "../helpers.ts";

const click: ToolFacts = {
  server: "desktop-control",
  tool: "mouse_click",
  args: { x: 1, y: 2 },
  caller: {},
  annotations: { destructiveHint: true },
  touches: ["desktop-input"],
};

Deno.test("policy: globs match paths, URLs and names whole", () => {
  assert.ok(globMatch("/home/*/secret/**", "/home/ann/secret/a/b.txt"));
  assert.ok(!globMatch("/home/*/secret/**", "/home/ann/x/secret/b.txt"));
  assert.ok(globMatch("https://*.example.com/**", "https://app.example.com/x"));
  assert.ok(
    !globMatch("https://*.example.com/**", "https://evil.com/x.example.com/"),
  );
  assert.ok(globMatch("Runtime.*", "Runtime.evaluate"));
  assert.ok(!globMatch("mouse_*", "xmouse_click"));
});

Deno.test("policy: defaults keep local callers working and ask agents before risky tools", () => {
  const policy = PolicyConfig.parse({});
  assert.deepEqual(evaluate(policy, click), {
    decision: "allow",
    rule: "default",
  });
  const agent = { ...click, caller: { agent: "bot" } };
  assert.deepEqual(evaluate(policy, agent), {
    decision: "ask",
    rule: "safe-default:desktop-input",
  });
  assert.equal(
    evaluate(policy, {
      server: "platform-auth",
      tool: "get_token",
      args: { platform: "github" },
      caller: { agent: "bot" },
      touches: ["credentials"],
    }).decision,
    "ask",
  );
  assert.equal(
    evaluate(policy, {
      server: "memory",
      tool: "store_memory",
      args: {},
      caller: { agent: "bot" },
    }).rule,
    "agent_default",
  );
  const strict = PolicyConfig.parse({
    strict: true,
    write_roots: ["/work/out/"],
  });
  assert.equal(evaluate(strict, click).decision, "ask");
  const write: Omit<ToolFacts, "args"> = {
    server: "desktop-control",
    tool: "file_write",
    caller: {},
    annotations: { destructiveHint: true },
    touches: ["files-write"],
    argKinds: { path: "path" },
  };
  assert.equal(
    evaluate(strict, { ...write, args: { path: "/work/out/a.txt" } }).decision,
    "allow",
  );
  assert.deepEqual(
    evaluate(strict, { ...write, args: { path: "/etc/passwd" } }),
    {
      decision: "ask",
      rule: "safe-default:files-write",
    },
  );
});

Deno.test("policy: the first matching rule wins; args, agent and caller narrow a rule", () => {
  const policy = PolicyConfig.parse({
    rules: [
      {
        id: "cdp",
        tool: "cdp_*",
        args: { method: ["Runtime.*", "Debugger.*"] },
        decision: "deny",
      },
      { agent: "ops-*", server: "desktop-control", decision: "allow" },
      { caller: "local", tool: "mouse_click", decision: "ask" },
    ],
  });
  assert.deepEqual(
    evaluate(policy, {
      ...click,
      tool: "cdp_send",
      args: { method: "Runtime.evaluate" },
    }),
    { decision: "deny", rule: "cdp" },
  );
  assert.equal(
    evaluate(policy, {
      ...click,
      tool: "cdp_send",
      args: { method: "Page.navigate" },
    }).rule,
    "default",
  );
  assert.deepEqual(evaluate(policy, { ...click, caller: { agent: "ops-1" } }), {
    decision: "allow",
    rule: "rules[1]",
  });
  assert.deepEqual(evaluate(policy, click), {
    decision: "ask",
    rule: "rules[2]",
  });
  assert.throws(() => PolicyConfig.parse({ rules: [{ decision: "maybe" }] }));
  assert.throws(() =>
    PolicyConfig.parse({ rules: [{ decision: "allow", nope: 1 }] })
  );
});

Deno.test("policy: audit records past retention are dropped, newer ones kept", async () => {
  let now = Date.parse("2026-01-01T00:00:00Z");
  const trail = new AuditTrail(new MemoryStore(), () => 1, () => now);
  const record = {
    caller: "local",
    session: null,
    server: "memory",
    tool: "list_memories",
    args: redactArgs({ namespace: "n", value: "SECRET-VALUE", x: 1 }),
    decision: "allowed",
    rule: "default",
    decided_by: null,
    outcome: "ok" as const,
    duration_ms: 1,
  };
  await trail.append(record);
  now += 2 * 86_400_000;
  await trail.append(record);
  assert.equal(await trail.prune(), 1);
  const left = await trail.query();
  assert.equal(left.length, 1);
  assert.equal(left[0].time, "2026-01-03T00:00:00.000Z");
  assert.deepEqual(left[0].args, { namespace: "n", value: "<12 chars>", x: 1 });
});

/** An audit record of one allowed call. */
const LIST_CALL = {
  caller: "local",
  session: null,
  server: "memory",
  tool: "list_memories",
  args: {},
  decision: "allowed",
  rule: "default",
  decided_by: null,
  outcome: "ok" as const,
  duration_ms: 1,
};

Deno.test("policy: the count-triggered retention run never holds up a record's acknowledgement", async () => {
  let now = Date.parse("2026-01-01T00:00:00Z");
  const store = new MemoryStore();
  const trail = new AuditTrail(store, () => 1, () => now);
  const record = LIST_CALL;
  await trail.append(record); // the first record starts a run: nothing is old
  await trail.pruned();
  now += 2 * 86_400_000;
  await Promise.all(Array.from({ length: 199 }, () => trail.append(record)));
  assert.equal((await trail.query({ limit: 10_000 })).length, 200);
  // The 201st record starts a run; hold its listing until the append is back.
  const gate = Promise.withResolvers<void>();
  let listings = 0;
  const list = store.list.bind(store);
  store.list = async (prefix, options) => {
    listings++;
    await gate.promise;
    return list(prefix, options);
  };
  await trail.append(record);
  assert.equal(listings, 1); // started, not finished
  gate.resolve();
  await trail.pruned();
  store.list = list;
  const left = await trail.query({ limit: 10_000 });
  assert.equal(left.length, 200); // the first, older than a day, is gone
  assert.ok(left.every((r) => r.time === "2026-01-03T00:00:00.000Z"));
});

Deno.test("policy: a failed retention run is reported, and the record that started it is still acknowledged", async () => {
  const store = new MemoryStore();
  const failures: unknown[] = [];
  const trail = new AuditTrail(
    store,
    () => 1,
    Date.now,
    0,
    (error) => failures.push(error),
  );
  store.list = () => Promise.reject(new Error("store down for listing"));
  await trail.append(LIST_CALL);
  await assert.rejects(trail.pruned(), /store down for listing/);
  assert.equal(failures.length, 1);
});

Deno.test("policy: audit records of calls ending together share commits, each stored before its call returns", async () => {
  const store = new MemoryStore();
  let commits = 0;
  let plainSets = 0;
  const commit = store.commit.bind(store);
  store.commit = (op) => {
    commits++;
    // Records are new keys: a KV store then reads nothing before the commit.
    plainSets += op.mutations.filter((m) => m.type === "set" && !m.newKey)
      .length;
    return commit(op);
  };
  const set = store.set.bind(store);
  store.set = (key, value) => {
    commits++;
    return set(key, value);
  };
  const trail = new AuditTrail(store, () => 30);
  const record = (i: number) => ({
    caller: "local",
    session: null,
    server: "memory",
    tool: "search_memory",
    args: { n: i },
    decision: "allowed",
    rule: "default",
    decided_by: null,
    outcome: "ok" as const,
    duration_ms: 1,
  });
  await Promise.all(
    Array.from({ length: 300 }, async (_, i) => {
      await trail.append(record(i));
      // Acknowledged: this call's record is in the store now.
      const stored = await trail.query({ limit: 10_000 });
      assert.ok(stored.some((r) => JSON.stringify(r.args) === `{"n":${i}}`));
    }),
  );
  assert.equal((await trail.query({ limit: 10_000 })).length, 300);
  assert.ok(commits < 300 / 5, `${commits} commits for 300 records`);
  assert.equal(plainSets, 0);
  // One more after the burst is written too (no record waits for a next one).
  await trail.append(record(300));
  assert.equal((await trail.query({ limit: 10_000 })).length, 301);
});

Deno.test("policy: a call is answered without waiting for its audit commit; queries and shutdown flush it", async () => {
  const store = new MemoryStore();
  const commit = store.commit.bind(store);
  const release = Promise.withResolvers<void>();
  let held = 0;
  store.commit = async (op) => {
    held++;
    await release.promise; // the disk is slow: no commit ends until released
    return commit(op);
  };
  const { log } = capturedLog("info");
  const guard = new Guard(store, log, PolicyConfig.parse({}));
  const call: CallContext = {
    signal: new AbortController().signal,
    caller: {},
    progress: () => Promise.resolve(),
    log: () => Promise.resolve(),
    sample: () => Promise.reject(new Error("no sampling here")),
    elicit: () => Promise.reject(new Error("no elicitation here")),
    releaseStream: () => {},
  };
  const result = await guard.run(
    { ...click, server: "memory", tool: "search_memory", args: { q: "x" } },
    call,
    () => Promise.resolve({ content: [{ type: "text", text: "ok" }] }),
  );
  assert.equal(result.content[0].type, "text");
  assert.equal(held, 0, "the record waits to share a commit");
  let queried = false;
  const query = guard.audit.query().then((records) => {
    queried = true;
    return records;
  });
  assert.equal(held, 1, "a query commits what is queued at once");
  const flushed = guard.audit.flush();
  await Promise.resolve();
  assert.equal(queried, false, "a query waits for the queued record");
  release.resolve();
  await flushed;
  const records = await query;
  assert.equal(records.length, 1);
  assert.equal(records[0].tool, "search_memory");
  assert.equal(records[0].outcome, "ok");
});
