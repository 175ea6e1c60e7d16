// The persisted search index (backends/kv_index.ts): a restart loads the
// snapshot instead of rebuilding, replays the writes made after it, answers
// exactly as an index rebuilt from the entries, and rebuilds a snapshot that
// disagrees with what this code would write.

import assert from "node:assert/strict";
import { join } from "node:path";
import { openKvStore } from "../../../platform/store/kv.ts";
import {
  decodeIndex,
  encodeIndex,
} from "../../../tools/memory/index_snapshot.ts";
import { SearchIndex } from "../../../tools/memory/search_index.ts";
import { BuiltinEmbedder } from "../../../tools/memory/embedder_builtin.ts";
import type { JsonValue } from "../../../platform/store/mod.ts";
import {
  entry,
  NS,
  openReporting,
  queries,
  random,
  rankings,
} from "./index_fixture.ts";

const N = 400;
const BUILTIN_ID = new BuiltinEmbedder().id;

async function seeded(path: string): Promise<void> {
  const { backend, report } = await openReporting(await openKvStore(path));
  assert.equal(report.entries, 0);
  const writes: Promise<unknown>[] = [];
  for (let i = 0; i < N; i++) {
    writes.push(backend.put(await entry(i), "upsert"));
  }
  await Promise.all(writes);
  // Some churn, so the snapshot holds freed slots and replaced postings.
  for (let i = 0; i < N; i += 7) await backend.delete(NS, `note-${i}`);
  for (let i = 3; i < N; i += 11) {
    await backend.put(await entry(i, 1), "upsert");
  }
  await backend.close(); // no snapshot yet: close saves one
}

/**
 * Rankings of an index rebuilt from the entries: the head is marked as made
 * by another tokenizer, so the rebuild takes only the vectors from it.
 */
async function rebuilt(path: string) {
  const kv = await openKvStore(path);
  const head = (await kv.get(["x", NS]))?.value;
  assert.ok(head && typeof head === "object" && !Array.isArray(head));
  await kv.set(["x", NS], { ...head, tokenizer: "0" });
  const { backend, report } = await openReporting(kv);
  try {
    assert.equal(report.rebuilt, 1);
    assert.equal(report.loaded, 0);
    return { report, results: await rankings(backend, await queries()) };
  } finally {
    await backend.close();
  }
}

function tempPath(): string {
  return join(Deno.makeTempDirSync({ prefix: "agentd-index-" }), "store.kv");
}

Deno.test("a restart loads the persisted index and answers as a rebuilt one", async () => {
  const path = tempPath();
  try {
    await seeded(path);
    const { backend, report } = await openReporting(await openKvStore(path));
    let loaded;
    try {
      assert.deepEqual(
        {
          loaded: report.loaded,
          rebuilt: report.rebuilt,
          replayed: report.replayed,
        },
        { loaded: 1, rebuilt: 0, replayed: 0 },
      );
      loaded = await rankings(backend, await queries());
      assert.ok(
        loaded.some((r) => r.lexical.length > 0 && r.vector.length > 0),
      );
      // Tags and metadata come back too: list-by-tag and re-embedding use them.
      const page = await backend.list(NS, { limit: 200, tags: ["tag-1"] });
      assert.ok(page.entries.length > 0);
      assert.ok(page.entries.every((e) => e.tags.includes("tag-1")));
      assert.deepEqual(
        await backend.staleEmbeddings("other:1", 5).then((e) => e.length),
        5,
      );
    } finally {
      await backend.close();
    }
    const reference = await rebuilt(path);
    assert.equal(reference.report.entries, report.entries);
    assert.deepEqual(loaded, reference.results);
  } finally {
    await Deno.remove(join(path, ".."), { recursive: true });
  }
});

Deno.test("writes after the snapshot are replayed from the journal", async () => {
  const path = tempPath();
  try {
    await seeded(path);
    {
      const { backend } = await openReporting(await openKvStore(path));
      // Fewer than close() saves: they stay in the journal only.
      for (let i = 0; i < 30; i++) {
        await backend.put(await entry(N + i), "upsert");
        await backend.put(await entry(i * 5, 2), "upsert");
      }
      for (let i = 1; i < 60; i += 13) await backend.delete(NS, `note-${i}`);
      await backend.close();
    }
    const { backend, report } = await openReporting(await openKvStore(path));
    let loaded;
    try {
      assert.equal(report.loaded, 1);
      // Only what changed since the snapshot, one journal row per key: 30
      // new, 30 replaced, and the deleted 1, 14, 27 and 53 (40 was replaced).
      assert.equal(report.replayed, 64);
      loaded = await rankings(backend, await queries());
      assert.equal(
        (await backend.get(NS, `note-${N + 29}`))?.key,
        `note-${N + 29}`,
      );
    } finally {
      await backend.close();
    }
    assert.deepEqual(loaded, (await rebuilt(path)).results);
  } finally {
    await Deno.remove(join(path, ".."), { recursive: true });
  }
});

Deno.test("a later save rewrites only the vector-row parts that changed", async () => {
  const path = tempPath();
  const head = async (kv: Awaited<ReturnType<typeof openKvStore>>) => {
    const value = (await kv.get(["x", NS]))?.value;
    assert.ok(value && typeof value === "object" && !Array.isArray(value));
    const { id, row_parts } = value;
    assert.ok(typeof id === "string" && Array.isArray(row_parts));
    const parts = row_parts.map((slab) =>
      Array.isArray(slab) ? slab.map((ref) => Array.isArray(ref) && ref[0]) : []
    );
    return { id, parts };
  };
  try {
    await seeded(path);
    let kv = await openKvStore(path);
    const first = await head(kv);
    await kv.close();
    // 342 live rows of 256 bytes in parts of 60,000: 1 full, 1 partial; 150 more fill 1 and start 2.
    assert.deepEqual(first.parts, [[first.id, first.id]]);
    {
      const { backend } = await openReporting(await openKvStore(path));
      for (let i = 0; i < 150; i++) {
        await backend.put(await entry(N + i), "upsert");
      }
      await backend.close(); // 150 pending: close saves
    }
    kv = await openKvStore(path);
    const second = await head(kv);
    assert.notEqual(second.id, first.id);
    assert.deepEqual(second.parts, [[first.id, second.id, second.id]]);
    // Nothing else is left: the first snapshot's other parts are gone.
    const keys = (await kv.list(["y", NS], { limit: 1000 })).entries
      .map((row) => JSON.stringify(row.key.slice(2)));
    assert.deepEqual(
      keys.sort(),
      [
        JSON.stringify([first.id, "r", 0, 0]),
        JSON.stringify([second.id, 0]),
        JSON.stringify([second.id, "r", 0, 1]),
        JSON.stringify([second.id, "r", 0, 2]),
      ].sort(),
    );
    await kv.close();
    const { backend, report } = await openReporting(await openKvStore(path));
    let loaded;
    try {
      assert.equal(report.loaded, 1);
      assert.equal(report.replayed, 0);
      loaded = await rankings(backend, await queries());
    } finally {
      await backend.close();
    }
    assert.deepEqual(loaded, (await rebuilt(path)).results);
  } finally {
    await Deno.remove(join(path, ".."), { recursive: true });
  }
});

/** Each way a snapshot can disagree, applied to the stored head or parts. */
const DAMAGE: Record<
  string,
  (head: { [key: string]: JsonValue }, parts: Uint8Array[]) => {
    head: { [key: string]: JsonValue };
    parts: (Uint8Array | null)[];
  }
> = {
  "another format": (head, parts) => ({
    head: { ...head, format: 999 },
    parts,
  }),
  "another tokenizer": (head, parts) => ({
    head: { ...head, tokenizer: "0" },
    parts,
  }),
  "a truncated part": (head, parts) => ({
    head,
    parts: parts.map((p, i) =>
      i === parts.length - 1 ? p.subarray(0, p.length / 2) : p
    ),
  }),
  "a missing part": (head, parts) => ({
    head,
    parts: parts.map((p, i) => i === 0 ? null : p),
  }),
  "garbage bytes": (head, parts) => ({
    head,
    parts: parts.map((p) => new Uint8Array(p.length).fill(0x41)),
  }),
  "an unreadable head": (_head, parts) => ({ head: { nonsense: true }, parts }),
};

/** Damage after which the snapshot's vectors still decode (the rebuild keeps them). */
const VECTORS_KEPT = new Set(["another tokenizer"]);

for (const [name, damage] of Object.entries(DAMAGE)) {
  Deno.test(`a snapshot with ${name} is rebuilt from the entries`, async () => {
    const path = tempPath();
    try {
      await seeded(path);
      const expected = (await rebuilt(path)).results;
      // rebuilt() marked the head as another tokenizer's; save one again, then damage it.
      {
        const { backend } = await openReporting(await openKvStore(path));
        assert.equal(await backend.saveIndex(NS), true);
        await backend.close();
      }
      const kv = await openKvStore(path);
      const head = (await kv.get(["x", NS]))?.value;
      assert.ok(head && typeof head === "object" && !Array.isArray(head));
      const id = String(head.id);
      const rows = (await kv.list(["y", NS, id], { limit: 1000 })).entries
        .filter((r) => typeof r.key[3] === "number");
      assert.ok(rows.length > 0);
      const damaged = damage(
        head,
        rows.map((r) => r.bytes ?? new Uint8Array(0)),
      );
      await kv.set(["x", NS], damaged.head);
      for (const [i, part] of damaged.parts.entries()) {
        if (part === null) await kv.delete(["y", NS, id, i]);
        else await kv.set(["y", NS, id, i], part);
      }
      const { backend, report, logs } = await openReporting(kv);
      try {
        assert.equal(report.rebuilt, 1, name);
        assert.equal(report.loaded, 0, name);
        assert.ok(logs.some((l) => l.includes("memory_index_rebuilt")));
        const results = await rankings(backend, await queries());
        if (VECTORS_KEPT.has(name)) assert.deepEqual(results, expected);
        else {
          // The vectors were only in the snapshot: lexical search is whole,
          // and every entry is listed for the re-embedding job.
          assert.deepEqual(
            results.map((r) => r.lexical),
            expected.map((r) => r.lexical),
          );
          assert.ok(results.every((r) => r.vector.length === 0));
          const stale = await backend.staleEmbeddings(BUILTIN_ID, 1000);
          assert.equal(stale.length, report.entries);
        }
      } finally {
        await backend.close();
      }
    } finally {
      await Deno.remove(join(path, ".."), { recursive: true });
    }
  });
}

Deno.test("a change of embedder after the snapshot reaches search through the journal", async () => {
  const path = tempPath();
  try {
    await seeded(path);
    {
      const { backend } = await openReporting(await openKvStore(path));
      const e = await backend.get(NS, "note-1");
      assert.ok(e);
      await backend.setEmbedding(NS, "note-1", e.updated_at, {
        embedder: "other:3",
        vector: Float32Array.from([1, 0, 0]),
      });
      await backend.close();
    }
    const { backend, report } = await openReporting(await openKvStore(path));
    try {
      assert.equal(report.loaded, 1);
      const { vector } = await backend.search(NS, {
        text: "",
        terms: [],
        limit: 5,
        embedder: "other:3",
        vector: Float32Array.from([1, 0.1, 0]),
      });
      assert.deepEqual(vector.map((h) => h.key), ["note-1"]);
      const stale = await backend.staleEmbeddings("other:3", 1000);
      assert.ok(!stale.some((s) => s.key === "note-1"));
    } finally {
      await backend.close();
    }
  } finally {
    await Deno.remove(join(path, ".."), { recursive: true });
  }
});

Deno.test("a snapshot round-trips the index exactly, after churn", async () => {
  const next = random(5);
  const index = new SearchIndex();
  for (let step = 0; step < 2000; step++) {
    const i = Math.floor(next() * 300);
    if (next() < 0.3) index.remove(`note-${i}`);
    else {
      const e = await entry(i, step);
      index.upsert(e.key, e.value, e.embedding, { tags: e.tags });
    }
  }
  const data = index.export();
  const decoded = decodeIndex(encodeIndex(data));
  // Vector rows travel apart from the encoded bytes (read into the slab's memory).
  decoded.slabs.forEach((slab, k) => slab.rows.set(data.slabs[k].rows));
  const copy = SearchIndex.fromData(decoded);
  assert.equal(copy.size, index.size);
  for (const q of await queries()) {
    assert.deepEqual(copy.search(q), index.search(q));
  }
  assert.deepEqual([...copy.metas()].sort(), [...index.metas()].sort());
  // The copy keeps working as an index: the same changes give the same answers.
  for (const target of [index, copy]) {
    target.remove("note-1");
    const e = await entry(7, 9999);
    target.upsert(e.key, e.value, e.embedding);
  }
  for (const q of await queries()) {
    assert.deepEqual(copy.search(q), index.search(q));
  }
});
