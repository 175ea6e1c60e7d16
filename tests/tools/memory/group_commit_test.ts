// Group commit: concurrent writes share Store commits, each caller is answered
// only after its commit, one refused write does not sink its batch, and a
// kill -9 during a burst of concurrent writes loses no acknowledged write.

import assert from "node:assert/strict";
import { join } from "node:path";
import type { Client } from "../../../platform/mcp_sdk.ts";
import {
  type Check,
  type Mutation,
  type Store,
} from "../../../platform/store/mod.ts";
import { MemoryStore } from "../../../platform/store/memory.ts";
import { KvStore, openKvStore } from "../../../platform/store/kv.ts";
import { KvBackend } from "../../../tools/memory/backends/kv.ts";
import { EntryNotFound } from "../../../tools/memory/backends/port.ts";
import type { Embedder, StoredEntry } from "../../../tools/memory/model.ts";
import { BuiltinEmbedder } from "../../../tools/memory/embedder_builtin.ts";
import { MemoryService } from "../../../tools/memory/service.ts";
import { createLogger } from "../../../platform/log.ts";
import { spawnServe, tempDir } from "../../helpers.ts";
import { call, connectMemory } from "./scenario.ts";

const T0 = "2026-01-01T00:00:00.000Z";

/** The memory service over `backend` with a fresh data key and quiet logs. */
async function service(
  backend: KvBackend,
  embedder: Embedder,
  clock?: () => number,
): Promise<MemoryService> {
  return new MemoryService({
    backend,
    embedder,
    dataKey: await crypto.subtle.generateKey(
      { name: "AES-GCM", length: 256 },
      false,
      ["encrypt", "decrypt"],
    ),
    log: createLogger({ level: "error" }),
    clock,
  });
}

function entry(key: string, value: string, tags: string[] = []): StoredEntry {
  return {
    namespace: "ns",
    key,
    value,
    tags,
    sensitive: false,
    created_at: T0,
    updated_at: T0,
    embedding: null,
  };
}

/** Counts commits that reach the store under it. */
function counting(store: Store): { store: Store; commits: () => number } {
  let commits = 0;
  const wrapped: Store = {
    kind: store.kind,
    get: (key) => store.get(key),
    getMany: (keys) => store.getMany(keys),
    set: (key, value) => store.set(key, value),
    delete: (key) => store.delete(key),
    list: (prefix, options) => store.list(prefix, options),
    commit(op: { checks?: Check[]; mutations: Mutation[] }) {
      commits++;
      return store.commit(op);
    },
    flush: () => store.flush(),
    close: () => store.close(),
  };
  return { store: wrapped, commits: () => commits };
}

Deno.test("group commit: 200 concurrent puts share commits and all land", async () => {
  const counted = counting(new MemoryStore());
  const backend = await KvBackend.open(counted.store);
  try {
    const results = await Promise.all(
      Array.from(
        { length: 200 },
        (_, i) =>
          backend.put(entry(`k${i}`, `value ${i}`, [`t${i % 3}`]), "upsert"),
      ),
    );
    assert.ok(results.every((old) => old === null));
    assert.ok(
      counted.commits() < 100,
      `200 writes took ${counted.commits()} commits`,
    );
    assert.deepEqual(await backend.countByNamespace(), { ns: 200 });
    const t1 = await backend.list("ns", { tags: ["t1"], limit: 1000 });
    assert.equal(t1.entries.length, 67);
    assert.equal((await backend.get("ns", "k199"))?.value, "value 199");
  } finally {
    await backend.close();
  }
});

Deno.test("group commit over Deno KV: a write reads only what it cannot vouch for, and no journal row before its commit", async () => {
  const dir = await Deno.makeTempDir({ prefix: "group_commit_test_" });
  const raw = await Deno.openKv(join(dir, "store.kv"));
  const reads: Deno.KvKey[][] = [];
  let commits = 0;
  const kv = new Proxy(raw, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (property === "getMany") {
        return (keys: Deno.KvKey[]) => {
          reads.push(keys);
          return target.getMany(keys);
        };
      }
      if (property === "get") {
        return (key: Deno.KvKey) => {
          reads.push([key]);
          return target.get(key);
        };
      }
      if (property === "atomic") {
        return () => {
          const atomic = target.atomic();
          const commit = atomic.commit.bind(atomic);
          atomic.commit = () => {
            commits++;
            return commit();
          };
          return atomic;
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const backend = await KvBackend.open(new KvStore(kv));
  const keysRead = () => reads.reduce((sum, keys) => sum + keys.length, 0);
  try {
    // 8 new entries with one tag each: the first write commits alone and
    // reads the namespace counter only (its entry is not in the index: taken
    // as absent, checked absent at the commit); the 7 others commit together
    // and read nothing (the counter as the first commit left it). No tag row
    // or journal row is read, before or at the commit.
    await Promise.all(
      Array.from(
        { length: 8 },
        (_, i) => backend.put(entry(`k${i}`, `value ${i}`, ["t"]), "upsert"),
      ),
    );
    assert.deepEqual(reads, [[["d", "n", "ns"]]]);
    assert.equal(commits, 2);
    // One client waiting for each answer: a lone new entry is one commit, no read.
    reads.length = 0;
    commits = 0;
    for (let i = 8; i < 12; i++) {
      await backend.put(entry(`k${i}`, `value ${i}`, ["t"]), "upsert");
    }
    assert.deepEqual([keysRead(), commits], [0, 4]);
    // Replacing them: the records as committed here are known, nothing is read.
    commits = 0;
    await Promise.all(
      Array.from(
        { length: 8 },
        (_, i) => backend.put(entry(`k${i}`, `again ${i}`, ["t"]), "upsert"),
      ),
    );
    assert.equal(keysRead(), 0);
    assert.ok(commits <= 2, `8 writes in flight took ${commits} commits`);
    // Changing tags: the row of a dropped tag is read at the commit, to be deleted.
    commits = 0;
    await backend.put(entry("k0", "once more", ["u"]), "upsert");
    assert.deepEqual(reads, [[["d", "t", "ns", "t", "k0"]]]);
    assert.equal(commits, 1);
    const byTag = await backend.list("ns", { tags: ["t"], limit: 20 });
    assert.equal(byTag.entries.length, 11);
    const byNewTag = await backend.list("ns", { tags: ["u"], limit: 10 });
    assert.deepEqual(byNewTag.entries.map((e) => e.key), ["k0"]);
    assert.equal((await backend.get("ns", "k7"))?.value, "again 7");
    assert.deepEqual(await backend.countByNamespace(), { ns: 12 });
  } finally {
    await backend.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("group commit: a belief another process made stale costs a failed commit, never a wrong write", async () => {
  const dir = await Deno.makeTempDir({ prefix: "group_commit_test_" });
  const path = join(dir, "store.kv");
  // Two daemons on one KV file: each knows only its own writes.
  const here = await KvBackend.open(await openKvStore(path));
  const there = await KvBackend.open(await openKvStore(path));
  try {
    await here.put(entry("a", "here 1", ["x"]), "upsert");
    await here.put(entry("b", "here 2"), "upsert");
    // Not in `there`'s index (taken as absent): the commit fails, the write
    // reads and replaces the entry, and the counter is not counted twice.
    const old = await there.put(entry("a", "there 1", ["y"]), "upsert");
    assert.equal(old?.value, "here 1");
    // An update of an entry `there` does not know is not refused.
    const updated = await there.put(entry("b", "there 2"), "update");
    assert.equal(updated?.value, "here 2");
    // `here` kept the counter and "a" as it committed them: both are stale now.
    assert.equal(
      (await here.put(entry("a", "here 3"), "upsert"))?.value,
      "there 1",
    );
    await here.put(entry("c", "here 4"), "upsert");
    await there.delete("ns", "c");
    // Deleted there, still believed present here: an update is refused, after a read.
    await assert.rejects(
      here.put(entry("c", "here 5"), "update"),
      EntryNotFound,
    );
    // Deleted here, written again there: a delete here finds it (nothing to
    // commit would check the belief, so it reads).
    assert.equal(await here.delete("ns", "b"), true);
    await there.put(entry("b", "there 3"), "upsert");
    assert.equal(await here.delete("ns", "b"), true);
    assert.deepEqual(await here.countByNamespace(), { ns: 1 });
    await here.put(entry("b", "here 6"), "upsert");
    assert.deepEqual(await here.countByNamespace(), { ns: 2 });
    assert.deepEqual(await there.countByNamespace(), { ns: 2 });
    assert.equal((await there.get("ns", "a"))?.value, "here 3");
    assert.deepEqual(
      (await there.list("ns", { tags: ["y"], limit: 10 })).entries,
      [],
    );
    assert.equal(await there.get("ns", "c"), null);
  } finally {
    await here.close();
    await there.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("group commit: writes to one key in one batch apply in order", async () => {
  const backend = await KvBackend.open(new MemoryStore());
  try {
    const [first, second, missing, removed] = await Promise.all([
      backend.put(entry("k", "one", ["a"]), "upsert"),
      backend.put(entry("k", "two", ["b"]), "upsert"),
      backend.put(entry("nope", "x"), "update").catch((error) => error),
      backend.delete("ns", "k"),
    ]);
    assert.equal(first, null);
    assert.equal(second?.value, "one");
    assert.ok(missing instanceof EntryNotFound, "update of a missing key");
    assert.equal(removed, true);
    assert.equal(await backend.get("ns", "k"), null);
    assert.deepEqual(await backend.countByNamespace(), {});
    assert.equal(
      (await backend.list("ns", { tags: ["b"], limit: 10 })).entries.length,
      0,
    );
  } finally {
    await backend.close();
  }
});

Deno.test("group commit: a write the store refuses fails alone", async () => {
  const backend = await KvBackend.open(new MemoryStore());
  try {
    const tooLong = "k".repeat(5000);
    // Refused before its read (the entry key) and at the batch's commit (a tag row's key).
    const outcomes = await Promise.allSettled([
      backend.put(entry("a", "1"), "upsert"),
      backend.put(entry(tooLong, "2"), "upsert"),
      backend.put(entry("b", "3"), "upsert"),
      backend.put(entry("k".repeat(1000), "4", ["t".repeat(1500)]), "upsert"),
      backend.put(entry("c", "5", ["x"]), "upsert"),
    ]);
    assert.deepEqual(outcomes.map((o) => o.status), [
      "fulfilled",
      "rejected",
      "fulfilled",
      "rejected",
      "fulfilled",
    ]);
    assert.deepEqual(await backend.countByNamespace(), { ns: 3 });
    assert.deepEqual(
      (await backend.list("ns", { tags: ["x"], limit: 10 })).entries.map((e) =>
        e.key
      ),
      ["c"],
    );
  } finally {
    await backend.close();
  }
});

Deno.test("store_memory keeps the created_at of the entry it replaces, decided in the write", async () => {
  let now = Date.parse(T0);
  let entryReads = 0;
  const inner = new MemoryStore();
  const counted: Store = {
    ...counting(inner).store,
    get(key) {
      if (key[0] === "e") entryReads++;
      return inner.get(key);
    },
  };
  const backend = await KvBackend.open(counted);
  const memory = await service(backend, new BuiltinEmbedder(), () => now);
  try {
    const first = await memory.store({}, {
      namespace: "ns",
      key: "k",
      value: "one",
      tags: ["a"],
    });
    assert.equal(first.replaced, false);
    assert.equal(first.entry.created_at, T0);
    now += 60_000;
    // Two replacements in flight together: both keep the first created_at.
    const [second, third] = await Promise.all([
      memory.store({}, { namespace: "ns", key: "k", value: "two", tags: [] }),
      memory.store({}, {
        namespace: "ns",
        key: "k",
        value: "three",
        tags: ["b"],
      }),
    ]);
    assert.equal(entryReads, 0, "given tags: no read of the old entry");
    for (const result of [second, third]) {
      assert.equal(result.replaced, true);
      assert.equal(result.entry.created_at, T0);
      assert.equal(result.entry.updated_at, new Date(now).toISOString());
    }
    const back = await memory.retrieve({}, "ns", "k");
    assert.deepEqual(
      [back.value, back.tags, back.created_at],
      ["three", ["b"], T0],
    );
    // Omitted tags keep the entry's tags (as this process knows them, no read).
    const reads = entryReads;
    const kept = await memory.store({}, {
      namespace: "ns",
      key: "k",
      value: "4",
    });
    assert.deepEqual([kept.entry.tags, kept.entry.created_at], [["b"], T0]);
    assert.equal(entryReads, reads);
  } finally {
    await backend.close();
  }
});

Deno.test("memory durability: kill -9 during a burst of concurrent writes loses no acknowledged write", async () => {
  await using dir = await tempDir();
  const first = await spawnServe(dir.path);
  const writers: { client: Client; close(): Promise<void> }[] = [];
  for (let i = 0; i < 4; i++) writers.push(await connectMemory(first));
  /** Key -> the value of its last acknowledged write. */
  const acknowledged = new Map<string, string>();
  let attempted = 0;
  let stop = false;
  const lanes = writers.flatMap((writer, w) =>
    Array.from({ length: 4 }, async (_, lane) => {
      for (let i = 0; !stop; i++) {
        // Every third write replaces the lane's previous key; every fifth omits tags (read first).
        const n = i % 3 === 2 ? i - 1 : i;
        const key = `w${w}-l${lane}-${n}`;
        const value = `acknowledged value ${i} of ${key}`;
        attempted++;
        try {
          await call(writer.client, "store_memory", {
            namespace: "burst",
            key,
            value,
            ...(i % 5 === 4 ? {} : { tags: [`lane${lane}`] }),
          });
        } catch {
          return; // the daemon is gone
        }
        acknowledged.set(key, value);
      }
    })
  );
  // Kill while writes are in flight, once enough have been acknowledged.
  while (acknowledged.size < 300) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const killed = await first.stop("SIGKILL");
  stop = true;
  assert.equal(killed.signal, "SIGKILL");
  // Closing the clients ends the calls the dead daemon will never answer.
  await Promise.all(writers.map((w) => w.client.close().catch(() => {})));
  await Promise.all(lanes);
  assert.ok(attempted > acknowledged.size, "writes were in flight");

  const second = await spawnServe(dir.path);
  const reader = await connectMemory(second);
  try {
    for (const [key, value] of acknowledged) {
      const back = await call(reader.client, "retrieve_memory", {
        namespace: "burst",
        key,
      });
      // A later write of the key may have landed unacknowledged, never an earlier one.
      const [, written] =
        String(back.value).match(/^acknowledged value (\d+) /) ??
          [];
      const [, expected] = value.match(/^acknowledged value (\d+) /) ?? [];
      assert.ok(
        Number(written) >= Number(expected),
        `${key}: ${back.value} is older than the acknowledged ${value}`,
      );
    }
    let listed = 0;
    let cursor: unknown;
    do {
      const page = await call(reader.client, "list_memories", {
        namespace: "burst",
        limit: 200,
        ...(typeof cursor === "string" ? { cursor } : {}),
      });
      listed += (page.entries as unknown[]).length;
      cursor = page.next_cursor;
    } while (typeof cursor === "string");
    assert.ok(listed >= acknowledged.size);
  } finally {
    await reader.close();
    assert.equal((await second.stop()).code, 0);
  }
});

Deno.test("a remote embedder is off the write path: store answers first, the vector follows", async () => {
  let release = () => {};
  const gate = new Promise<void>((resolve) => release = resolve);
  const asked: string[][] = [];
  const builtin = new BuiltinEmbedder();
  const remote: Embedder = {
    id: "remote:test",
    remote: true,
    async embed(texts) {
      asked.push(texts);
      await gate;
      return await builtin.embed(texts);
    },
  };
  const backend = await KvBackend.open(new MemoryStore());
  const memory = await service(backend, remote);
  try {
    // Both stores are answered while the embedder has not answered at all.
    await Promise.all([
      memory.store({}, { namespace: "ns", key: "a", value: "amber lantern" }),
      memory.store({}, { namespace: "ns", key: "b", value: "blue harbour" }),
    ]);
    assert.equal((await backend.get("ns", "a"))?.embedding, null);
    assert.ok(asked.flat().includes("a\namber lantern"), "embedding started");
    release();
    await memory.stop(); // waits for the batch in flight
    assert.equal(
      (await backend.get("ns", "a"))?.embedding?.embedder,
      "remote:test",
    );
    assert.equal(
      (await backend.get("ns", "b"))?.embedding?.embedder,
      "remote:test",
    );
  } finally {
    release();
    await backend.close();
  }
});
