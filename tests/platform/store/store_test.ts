import assert from "node:assert/strict";
import { join } from "node:path";
import { MIB, StoreError } from "../../../platform/store/mod.ts";
import { MemoryStore } from "../../../platform/store/memory.ts";
import {
  CHUNK_PREFIX,
  DATA_PREFIX,
  isChunkHeader,
  KvStore,
  openKvStore,
} from "../../../platform/store/kv.ts";
import { storeContract } from "./contract.ts";

storeContract("MemoryStore", () => {
  const store = new MemoryStore();
  return Promise.resolve({ store, cleanup: () => store.close() });
});

storeContract("KvStore", tempKvStore);

async function tempKvStore(): Promise<
  { store: KvStore; path: string; cleanup: () => Promise<void> }
> {
  const dir = await Deno.makeTempDir({ prefix: "store_test_" });
  const path = join(dir, "nested", "store.kv");
  const store = await openKvStore(path);
  return {
    store,
    path,
    cleanup: async () => {
      await store.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Reads the raw KV file: chunk records per write id, and the ids headers reference. */
async function rawChunks(
  path: string,
): Promise<{ chunks: Map<string, number>; referenced: Map<string, number> }> {
  const kv = await Deno.openKv(path);
  try {
    const chunks = new Map<string, number>();
    for await (const entry of kv.list({ prefix: [CHUNK_PREFIX] })) {
      const id = String(entry.key[1]);
      chunks.set(id, (chunks.get(id) ?? 0) + 1);
    }
    const referenced = new Map<string, number>();
    for await (const entry of kv.list({ prefix: [DATA_PREFIX] })) {
      if (isChunkHeader(entry.value)) {
        referenced.set(entry.value.id, entry.value.chunks);
      }
    }
    return { chunks, referenced };
  } finally {
    kv.close();
  }
}

/** A value whose every character depends on `n`, so a torn read is detectable. */
function patterned(n: number, bytes: number): { n: number; fill: string } {
  return { n, fill: String(n % 10).repeat(bytes) };
}

function isIntact(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (!("n" in value) || !("fill" in value)) return false;
  const { n, fill } = value;
  return typeof n === "number" && typeof fill === "string" &&
    fill === String(n % 10).repeat(fill.length);
}

async function readUntilDone(
  store: KvStore,
  state: { writing: boolean; reads: number },
): Promise<void> {
  while (state.writing) {
    const [entry] = await store.getMany([["live"]]);
    const page = await store.list([]);
    for (const value of [entry?.value, page.entries[0]?.value]) {
      assert.ok(isIntact(value), "torn read");
    }
    state.reads++;
  }
}

Deno.test("KvStore: data survives reopening the file", async () => {
  const { store, path, cleanup } = await tempKvStore();
  try {
    const version = await store.set(["keep"], { big: "b".repeat(MIB) });
    await store.set(["small"], 1);
    await store.close();
    const reopened = await openKvStore(path);
    try {
      const entry = await reopened.get(["keep"]);
      assert.deepEqual(entry, {
        key: ["keep"],
        value: { big: "b".repeat(MIB) },
        version,
      });
      assert.equal((await reopened.list([])).entries.length, 2);
    } finally {
      await reopened.close();
    }
  } finally {
    await cleanup();
  }
});

Deno.test("KvStore: a 3 MiB value round-trips through chunks", async () => {
  const { store, path, cleanup } = await tempKvStore();
  try {
    const value = Array.from(
      { length: 3 * 1024 },
      (_, i) => `${i}`.padEnd(1020, "é"),
    );
    const version = await store.set(["three"], value);
    assert.deepEqual(await store.get(["three"]), {
      key: ["three"],
      value,
      version,
    });
    await store.flush();
    const { chunks, referenced } = await rawChunks(path);
    assert.equal(referenced.size, 1);
    assert.deepEqual(chunks, referenced);
  } finally {
    await cleanup();
  }
});

Deno.test("KvStore: chunk records never appear in list results", async () => {
  const { store, cleanup } = await tempKvStore();
  try {
    await store.set(["big"], "x".repeat(2 * MIB));
    await store.set([CHUNK_PREFIX], "a logical key named like the chunk space");
    await store.set(["z", 1], "y".repeat(100_000));
    const keys = (await store.list([])).entries.map((e) => e.key);
    assert.deepEqual(keys, [["big"], [CHUNK_PREFIX], ["z", 1]]);
    assert.deepEqual((await store.list([CHUNK_PREFIX])).entries, []);
  } finally {
    await cleanup();
  }
});

Deno.test("KvStore: a failed check keeps the old chunked value and leaves no orphans", async () => {
  const { store, path, cleanup } = await tempKvStore();
  try {
    const old = patterned(1, 2 * MIB);
    const version = await store.set(["doc"], old);
    await store.set(["other"], 1);
    const result = await store.commit({
      checks: [{ key: ["other"], version: null }],
      mutations: [{ type: "set", key: ["doc"], value: patterned(2, 3 * MIB) }],
    });
    assert.deepEqual(result, { ok: false });
    assert.deepEqual(await store.get(["doc"]), {
      key: ["doc"],
      value: old,
      version,
    });
    await store.close();
    const { chunks, referenced } = await rawChunks(path);
    assert.equal(referenced.size, 1);
    assert.deepEqual(chunks, referenced);
  } finally {
    await cleanup();
  }
});

Deno.test("KvStore: replacing and deleting chunked values leaves no orphans", async () => {
  const { store, path, cleanup } = await tempKvStore();
  try {
    // Concurrent sets of one key race on the internal check and retry.
    const versions = await Promise.all(
      Array.from(
        { length: 6 },
        (_, i) => store.set(["race"], patterned(i, 300_000 + i)),
      ),
    );
    const winner = await store.get(["race"]);
    assert.ok(winner && isIntact(winner.value));
    assert.ok(versions.includes(winner.version));
    await store.set(["gone"], patterned(7, MIB));
    await store.delete(["gone"]);
    await store.set(["shrunk"], patterned(8, MIB));
    await store.set(["shrunk"], "small");
    await store.close();
    const { chunks, referenced } = await rawChunks(path);
    assert.equal(referenced.size, 1);
    assert.deepEqual(chunks, referenced);
  } finally {
    await cleanup();
  }
});

Deno.test("KvStore: readers never see a partially written value", async () => {
  const { store, cleanup } = await tempKvStore();
  try {
    // Several readers racing one writer of multi-chunk values: some reads
    // land between a header swap and the deletion of the old chunks.
    await store.set(["live"], patterned(0, 200_000));
    const state = { writing: true, reads: 0 };
    const writer = (async () => {
      for (let n = 1; n <= 40; n++) {
        await store.set(["live"], patterned(n, 200_000 + n * 1000));
      }
      state.writing = false;
    })();
    const readers = Array.from(
      { length: 4 },
      () => readUntilDone(store, state),
    );
    await Promise.all([writer, ...readers]);
    assert.ok(state.reads > 0);
    const last = await store.get(["live"]);
    assert.ok(isIntact(last?.value));
    assert.ok(last && typeof last.value === "object" && last.value !== null);
    assert.ok(!Array.isArray(last.value) && last.value.n === 40);
  } finally {
    await cleanup();
  }
});

Deno.test("KvStore: a read whose chunks vanish midway retries instead of tearing", async () => {
  const dir = await Deno.makeTempDir({ prefix: "store_test_" });
  const path = join(dir, "store.kv");
  const writer = await openKvStore(path);
  let replaceBeforeChunkRead = false;
  let replacements = 0;
  // Replace the value (dropping the old chunks) right after a reader has
  // read the old header and before it lists that header's chunks.
  const raw = await Deno.openKv(path);
  const kv = new Proxy(raw, {
    get(target, property) {
      if (property === "list") {
        return async function* (
          selector: Deno.KvListSelector,
          options?: Deno.KvListOptions,
        ) {
          if (
            replaceBeforeChunkRead && "prefix" in selector &&
            selector.prefix[0] === CHUNK_PREFIX
          ) {
            replaceBeforeChunkRead = false;
            await writer.set(["live"], patterned(++replacements + 1, 300_000));
          }
          yield* target.list(selector, options);
        };
      }
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const reader = new KvStore(kv);
  try {
    await reader.set(["live"], patterned(1, 300_000));
    const reads: (() => Promise<unknown>)[] = [
      async () => (await reader.get(["live"]))?.value,
      async () => (await reader.getMany([["live"]]))[0]?.value,
      async () => (await reader.list([])).entries[0]?.value,
    ];
    for (const [i, read] of reads.entries()) {
      replaceBeforeChunkRead = true;
      const value = await read();
      assert.equal(replacements, i + 1);
      assert.ok(isIntact(value));
      assert.deepEqual(value, patterned(i + 2, 300_000));
    }
  } finally {
    await reader.close();
    await writer.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("KvStore: a set of a new key reads nothing before its commit; a plain set reads the key's header", async () => {
  const dir = await Deno.makeTempDir({ prefix: "store_test_" });
  const raw = await Deno.openKv(join(dir, "store.kv"));
  let reads = 0;
  const kv = new Proxy(raw, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (property === "getMany" || property === "get") reads++;
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const store = new KvStore(kv);
  try {
    await store.commit({
      mutations: [{ type: "set", key: ["log", "a"], value: 1, newKey: true }],
    });
    assert.equal(reads, 0);
    await store.commit({
      mutations: [{ type: "set", key: ["log", "b"], value: 2 }],
    });
    assert.equal(reads, 1);
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openKvStore: creates missing parent directories", async () => {
  const dir = await Deno.makeTempDir({ prefix: "store_test_" });
  try {
    const store = await openKvStore(join(dir, "a", "b", "c.kv"));
    await store.set(["k"], 1);
    await store.close();
    assert.ok((await Deno.stat(join(dir, "a", "b", "c.kv"))).isFile);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openKvStore: a directory or unusable path fails clearly", async () => {
  const dir = await Deno.makeTempDir({ prefix: "store_test_" });
  try {
    await assert.rejects(openKvStore(dir), (error) => {
      assert.ok(error instanceof StoreError);
      assert.equal(
        error.message,
        `Cannot open store at ${dir}: the path is a directory`,
      );
      return true;
    });
    await Deno.writeTextFile(join(dir, "file"), "");
    const underFile = join(dir, "file", "store.kv");
    await assert.rejects(openKvStore(underFile), (error) => {
      assert.ok(error instanceof StoreError);
      assert.ok(
        error.message.startsWith(`Cannot open store at ${underFile}: `),
        error.message,
      );
      return true;
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
