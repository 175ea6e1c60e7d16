// KvConversations: a turn's history read lets its append commit with no read
// of its own, and another writer in between (another daemon on the store)
// still gets the sequence right.

import assert from "node:assert/strict";
import { join } from "node:path";
import type {
  Check,
  CommitResult,
  ListOptions,
  ListPage,
  Mutation,
  Store,
  StoreKey,
} from "../../../platform/store/mod.ts";
import { openKvStore } from "../../../platform/store/kv.ts";
import { MemoryStore } from "../../../platform/store/memory.ts";
import { GroupCommit } from "../../../tools/memory/backends/kv_group_commit.ts";
import { KvConversations } from "../../../tools/memory/backends/kv_conversations.ts";
import type { Message } from "../../../tools/memory/model.ts";

const AT = "2026-01-01T00:00:00.000Z";

/** Counts the store operations a conversation makes. */
class CountingStore {
  reads = 0;
  lists: number = 0;
  commits = 0;
  /** Message keys set without newKey (the KV store would read them first). */
  plainMessageSets = 0;
  constructor(private readonly inner: Store) {}
  get(key: StoreKey) {
    this.reads++;
    return this.inner.get(key);
  }
  getMany(keys: readonly StoreKey[]) {
    this.reads++;
    return this.inner.getMany(keys);
  }
  list(prefix: StoreKey, options?: ListOptions): Promise<ListPage> {
    this.reads++;
    this.lists++;
    return this.inner.list(prefix, options);
  }
  commit(
    op: { checks?: Check[]; mutations: Mutation[] },
  ): Promise<CommitResult> {
    this.commits++;
    for (const m of op.mutations) {
      if (m.type === "set" && m.key[0] === "m" && !m.newKey) {
        this.plainMessageSets++;
      }
    }
    return this.inner.commit(op);
  }
}

function counted(inner: Store): { store: Store; counts: CountingStore } {
  const counts = new CountingStore(inner);
  const store = new Proxy(inner, {
    get(target, name) {
      if (
        name === "get" || name === "getMany" || name === "list" ||
        name === "commit"
      ) {
        const method = Reflect.get(counts, name);
        return typeof method === "function" ? method.bind(counts) : method;
      }
      const value = Reflect.get(target, name);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { store, counts };
}

function exchange(n: number): Message[] {
  return [
    { role: "user", content: `question ${n}`, at: AT },
    {
      role: "assistant",
      content: `answer ${n}`,
      at: AT,
      extra: { stop_reason: "end_turn" },
    },
  ];
}

for (const kind of ["kv", "memory"] as const) {
  Deno.test(`conversations (${kind}): a turn is one history read and one commit; another writer in between keeps the order`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "agentd-conv-" });
    const inner = kind === "kv"
      ? await openKvStore(join(dir, "store.kv"))
      : new MemoryStore();
    try {
      const { store, counts } = counted(inner);
      const here = new KvConversations(store, new GroupCommit(store));
      // Another daemon sharing the store.
      const there = new KvConversations(inner, new GroupCommit(inner));

      for (let turn = 0; turn < 3; turn++) {
        const reads = counts.reads;
        const commits = counts.commits;
        const history = await here.history("agent", "s1", 50);
        assert.equal(history.length, turn * 2);
        assert.equal(
          await here.append("agent", "s1", exchange(turn)),
          turn * 2 + 2,
        );
        // On a KV file the turns after the first read nothing: the only
        // commits since are this store's own append (its change mark says so).
        assert.equal(
          counts.reads - reads,
          kind === "kv" && turn > 0 ? 0 : 1,
          `turn ${turn}: reads`,
        );
        assert.equal(counts.commits - commits, 1, `turn ${turn}: commits`);
      }
      // New message keys replace nothing: the store need not read them.
      assert.equal(counts.plainMessageSets, 0);

      // After this process read the history, another writer appends: the
      // guessed version fails its check, and the append reads and retries.
      await here.history("agent", "s1", 50);
      assert.equal(await there.append("agent", "s1", exchange(100)), 8);
      // The history kept here is stale: the session record's version says so.
      assert.deepEqual(
        (await here.history("agent", "s1", 50)).map((m) => m.content).slice(-2),
        ["question 100", "answer 100"],
      );
      assert.equal(await there.append("agent", "s1", exchange(101)), 10);
      assert.equal(await here.append("agent", "s1", exchange(3)), 12);
      // Twice in a row with no read in between: the commit's version is known.
      assert.equal(await here.append("agent", "s1", exchange(4)), 14);

      const order = [0, 1, 2, 100, 101, 3, 4].flatMap((n) => [
        `question ${n}`,
        `answer ${n}`,
      ]);
      const all = await there.history("agent", "s1", 100);
      assert.deepEqual(all.map((m) => m.content), order);
      assert.deepEqual(
        (await here.history("agent", "s1", 100)).map((m) => m.content),
        order,
      );
      assert.deepEqual(
        (await here.history("agent", "s1", 3)).map((m) => m.content),
        order.slice(-3),
      );
      assert.deepEqual(all[1].extra, { stop_reason: "end_turn" });
      // A new session: its history says there is no record yet.
      await here.history("agent", "s2", 50);
      assert.equal(await here.append("agent", "s2", exchange(0)), 2);
      assert.equal(await there.append("agent", "s2", exchange(1)), 4);
      assert.equal((await here.history("agent", "s2", 10)).length, 4);
      assert.equal((await there.history("agent", "s2", 10)).length, 4);
    } finally {
      await inner.close();
      await Deno.remove(dir, { recursive: true });
    }
  });

  Deno.test(`conversations (${kind}): a history read here before is one small read, not a list, and stays exact`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "agentd-conv-" });
    const inner = kind === "kv"
      ? await openKvStore(join(dir, "store.kv"))
      : new MemoryStore();
    try {
      const { store, counts } = counted(inner);
      const here = new KvConversations(store, new GroupCommit(store));
      const there = new KvConversations(inner, new GroupCommit(inner));
      for (let turn = 0; turn < 30; turn++) {
        await there.append("agent", "long", exchange(turn));
      }
      assert.equal((await here.history("agent", "long", 50)).length, 50);
      assert.equal(counts.lists, 1);
      for (let turn = 30; turn < 33; turn++) {
        const listsBefore: number = counts.lists;
        const reads: number = counts.reads;
        const history = await here.history("agent", "long", 50);
        assert.equal(history.length, 50);
        assert.equal(history[49].content, `answer ${turn - 1}`);
        assert.equal(history[0].content, `question ${turn - 25}`);
        await here.append("agent", "long", exchange(turn));
        assert.equal(counts.lists - listsBefore, 0, `turn ${turn}: no list`);
        assert.equal(
          counts.reads - reads,
          kind === "kv" ? 0 : 1,
          `turn ${turn}: ${kind === "kv" ? "no read" : "one read"}`,
        );
      }
      // More than was kept: listed again.
      assert.equal((await here.history("agent", "long", 80)).length, 66);
      // Another daemon's append: seen at once.
      await there.append("agent", "long", exchange(99));
      const seen = await here.history("agent", "long", 2);
      assert.deepEqual(seen.map((m) => m.content), [
        "question 99",
        "answer 99",
      ]);
      assert.deepEqual(seen[1].extra, { stop_reason: "end_turn" });
      // No session record, no messages: nothing to list, here or in a process that kept nothing.
      const listed: number = counts.lists;
      const reads: number = counts.reads;
      assert.deepEqual(await here.history("agent", "none", 50), []);
      assert.deepEqual(
        await new KvConversations(store, new GroupCommit(store)).history(
          "agent",
          "none",
          50,
        ),
        [],
      );
      assert.equal(counts.lists - listed, 0);
      assert.equal(counts.reads - reads, 2);
    } finally {
      await inner.close();
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("conversations (kv): no read while only this store commits; another connection's or process's commit makes the next history read again, and it is exact", async () => {
  const dir = await Deno.makeTempDir({ prefix: "agentd-conv-" });
  const path = join(dir, "store.kv");
  const [inner, elsewhere] = await Promise.all([
    openKvStore(path),
    openKvStore(path),
  ]);
  try {
    const { store, counts } = counted(inner);
    const here = new KvConversations(store, new GroupCommit(store));
    await here.history("agent", "s", 50);
    await here.append("agent", "s", exchange(0));
    // Own commits of other keys (memory entries, audit records) change nothing.
    await inner.set(["e", "agent", "k"], "v");
    let reads = counts.reads;
    assert.equal((await here.history("agent", "s", 50)).length, 2);
    assert.equal(counts.reads - reads, 0, "own commits only: no read");

    // Another connection on the file commits, even to another key: read.
    await elsewhere.set(["unrelated"], 1);
    reads = counts.reads;
    assert.equal((await here.history("agent", "s", 50)).length, 2);
    assert.equal(counts.reads - reads, 1, "another connection: one read");
    reads = counts.reads;
    await here.history("agent", "s", 50);
    assert.equal(counts.reads - reads, 0, "and then none again");

    // Another process appends to the session: seen.
    const child = await new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        "--unstable-kv",
        `import { openKvStore } from ${
          JSON.stringify(
            new URL("../../../platform/store/kv.ts", import.meta.url).href,
          )
        };
         import { GroupCommit } from ${
          JSON.stringify(
            new URL(
              "../../../tools/memory/backends/kv_group_commit.ts",
              import.meta.url,
            ).href,
          )
        };
         import { KvConversations } from ${
          JSON.stringify(
            new URL(
              "../../../tools/memory/backends/kv_conversations.ts",
              import.meta.url,
            ).href,
          )
        };
         const store = await openKvStore(${JSON.stringify(path)});
         const there = new KvConversations(store, new GroupCommit(store));
         await there.append("agent", "s", [
           { role: "user", content: "from the child", at: ${
          JSON.stringify(AT)
        } },
         ]);
         await store.close();`,
      ],
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    assert.ok(child.success);
    const history = await here.history("agent", "s", 50);
    assert.deepEqual(history.map((m) => m.content), [
      "question 0",
      "answer 0",
      "from the child",
    ]);
    assert.equal(await here.append("agent", "s", exchange(1)), 5);
  } finally {
    await Promise.all([inner.close(), elsewhere.close()]);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("conversations: extra fields round-trip as JSON; a malformed stored message is reported, not returned", async () => {
  const store = new MemoryStore();
  try {
    const conversations = new KvConversations(store, new GroupCommit(store));
    await conversations.append("agent", "s", [{
      role: "user",
      content: "hi",
      at: AT,
      extra: { from: "bob", nested: { n: 1, gone: undefined }, list: [1, "a"] },
    }]);
    const [stored] = await conversations.history("agent", "s", 10);
    assert.deepEqual(stored.extra, {
      from: "bob",
      nested: { n: 1 },
      list: [1, "a"],
    });
    // Written around the session record (a damaged store): read by a process that kept nothing.
    await store.set(["m", "agent", "s", "000000000001"], {
      role: "assistant",
      content: 42,
      at: AT,
    });
    await assert.rejects(
      new KvConversations(store, new GroupCommit(store)).history(
        "agent",
        "s",
        10,
      ),
      /stored conversation message is unreadable/,
    );
  } finally {
    await store.close();
  }
});
