// store_memory without `tags` keeps the entry's tags: taken from what this
// process knows of the entry and checked at the write, so the usual call is
// one commit with no read; another process's change of the tags makes the
// store read the entry and keep its tags as they are now.

import assert from "node:assert/strict";
import { join } from "node:path";
import { openKvStore } from "../../../platform/store/kv.ts";
import { createLogger } from "../../../platform/log.ts";
import { KvBackend } from "../../../tools/memory/backends/kv.ts";
import { DeferredBackend } from "../../../tools/memory/backends/deferred.ts";
import { BuiltinEmbedder } from "../../../tools/memory/embedder_builtin.ts";
import { MemoryService } from "../../../tools/memory/service.ts";

const T0 = Date.parse("2026-01-01T00:00:00.000Z");

function service(
  backend: KvBackend | DeferredBackend,
  dataKey: CryptoKey,
  clock: () => number,
): MemoryService {
  return new MemoryService({
    backend,
    embedder: new BuiltinEmbedder(),
    dataKey,
    log: createLogger({ level: "error" }),
    clock,
  });
}

function dataKey(): Promise<CryptoKey> {
  return crypto.subtle.generateKey(
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
}

/** Deno KV reads (keys) and commits of every Deno.Kv in this process while `on`. */
function countKv(): { reads: number; commits: number; on: boolean } {
  const counted = { reads: 0, commits: 0, on: false };
  const proto = Deno.Kv.prototype;
  const getMany = proto.getMany;
  const get = proto.get;
  const atomic = proto.atomic;
  proto.getMany = function (this: Deno.Kv, keys, options) {
    if (counted.on) counted.reads += keys.length;
    return getMany.call(this, keys, options);
  } as typeof proto.getMany;
  proto.get = function (this: Deno.Kv, key, options) {
    if (counted.on) counted.reads++;
    return get.call(this, key, options);
  } as typeof proto.get;
  proto.atomic = function (this: Deno.Kv) {
    const op = atomic.call(this);
    const commit = op.commit.bind(op);
    op.commit = () => {
      if (counted.on) counted.commits++;
      return commit();
    };
    return op;
  };
  return counted;
}

function failures(memory: MemoryService): number {
  const metric = memory.metrics().find((m) =>
    m.name === "agentd_memory_operation_failures_total"
  );
  return metric?.samples.length ?? 0;
}

const kv = countKv();

for (const deferred of [false, true]) {
  Deno.test(
    `store_memory without tags keeps them with no read: one commit${
      deferred ? " (behind DeferredBackend, as the daemon opens it)" : ""
    }`,
    async () => {
      const dir = await Deno.makeTempDir({ prefix: "store_tags_test_" });
      const now = T0;
      const opened = KvBackend.open(await openKvStore(join(dir, "store.kv")));
      const backend = deferred
        ? new DeferredBackend("local", opened)
        : await opened;
      if (backend instanceof DeferredBackend) await backend.ready();
      const memory = service(backend, await dataKey(), () => now);
      try {
        await memory.store({}, {
          namespace: "ns",
          key: "warm",
          value: "the namespace counter is read once",
        });
        await memory.store({}, {
          namespace: "ns",
          key: "k",
          value: "amber lantern",
          tags: ["a", "b"],
        });
        await memory.store({}, {
          namespace: "ns",
          key: "secret",
          value: "the vault code",
          tags: ["sensitive"],
        });
        kv.reads = 0;
        kv.commits = 0;
        kv.on = true;
        const kept = await memory.store({}, {
          namespace: "ns",
          key: "k",
          value: "blue harbour",
        });
        const fresh = await memory.store({}, {
          namespace: "ns",
          key: "new",
          value: "green field",
        });
        const sealed = await memory.store({}, {
          namespace: "ns",
          key: "secret",
          value: "the new vault code",
        });
        kv.on = false;
        assert.deepEqual([kv.reads, kv.commits], [0, 3]);
        assert.deepEqual(
          [kept.replaced, kept.entry.tags, kept.entry.value],
          [true, ["a", "b"], "blue harbour"],
        );
        assert.deepEqual([fresh.replaced, fresh.entry.tags], [false, []]);
        // Still sensitive: encrypted at rest, found by key only.
        assert.deepEqual(
          [sealed.entry.sensitive, sealed.entry.tags],
          [true, ["sensitive"]],
        );
        const back = await memory.retrieve({}, "ns", "secret");
        assert.equal(back.value, "the new vault code");
        const stored = await backend.get("ns", "secret");
        assert.ok(
          stored && !stored.value.includes("vault"),
          "encrypted at rest",
        );
        const found = await memory.search({}, "ns", "vault", 5);
        assert.ok(found.hits.every((hit) => hit.key !== "secret"));
      } finally {
        await backend.close();
        await Deno.remove(dir, { recursive: true });
      }
    },
  );
}

Deno.test("store_memory without tags, tags changed by another process: the store reads them and keeps them", async () => {
  const dir = await Deno.makeTempDir({ prefix: "store_tags_test_" });
  const path = join(dir, "store.kv");
  const key = await dataKey();
  let now = T0;
  const hereBackend = await KvBackend.open(await openKvStore(path));
  const thereBackend = await KvBackend.open(await openKvStore(path));
  const here = service(hereBackend, key, () => now);
  const there = service(thereBackend, key, () => now);
  try {
    await here.store({}, {
      namespace: "ns",
      key: "k",
      value: "one",
      tags: ["a"],
    });
    now += 60_000;
    // `there` makes it sensitive; `here` still knows it with tag "a".
    await there.store({}, {
      namespace: "ns",
      key: "k",
      value: "two",
      tags: ["sensitive"],
    });
    now += 60_000;
    const result = await here.store({}, {
      namespace: "ns",
      key: "k",
      value: "three",
    });
    assert.deepEqual(
      [result.replaced, result.entry.tags, result.entry.sensitive],
      [true, ["sensitive"], true],
    );
    assert.equal(result.entry.created_at, new Date(T0).toISOString());
    const stored = await thereBackend.get("ns", "k");
    assert.ok(stored?.sensitive && stored.value !== "three", "encrypted");
    assert.equal((await there.retrieve({}, "ns", "k")).value, "three");
    // Unknown here and written there: absent as far as `here` knows.
    await there.store({}, {
      namespace: "ns",
      key: "m",
      value: "from there",
      tags: ["x"],
    });
    const m = await here.store({}, { namespace: "ns", key: "m", value: "4" });
    assert.deepEqual([m.replaced, m.entry.tags], [true, ["x"]]);
    assert.equal(failures(here), 0, "a changed entry is not a failed store");
    assert.deepEqual(await hereBackend.countByNamespace(), { ns: 2 });
  } finally {
    await hereBackend.close();
    await thereBackend.close();
    await Deno.remove(dir, { recursive: true });
  }
});
