// A store written by the previous version (fixtures/store_format2.kv, made
// with commit e910094: JSON entry records with base64 int8 vectors, an index
// snapshot of format 2 in base64 parts, 20 journal rows holding only write
// ids) opens without a rebuild, answers as an index rebuilt from it, and is
// migrated by later writes and the next save (binary records, format 3).

import assert from "node:assert/strict";
import { join } from "node:path";
import { openKvStore } from "../../../platform/store/kv.ts";
import { NS, openReporting, queries, rankings } from "./index_fixture.ts";

const FIXTURE = new URL("./fixtures/store_format2.kv", import.meta.url);
/** 120 written, 14 deleted, 12 added and 7 replaced after the save, 1 more deleted. */
const ENTRIES = 117;

async function copy(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "agentd-legacy-" });
  const path = join(dir, "store.kv");
  await Deno.copyFile(FIXTURE, path);
  return path;
}

/** Rankings after a rebuild (the head marked as another tokenizer's). */
async function rebuilt(path: string) {
  const kv = await openKvStore(path);
  const head = (await kv.get(["x", NS]))?.value;
  assert.ok(head && typeof head === "object" && !Array.isArray(head));
  await kv.set(["x", NS], { ...head, tokenizer: "0" });
  const { backend, report } = await openReporting(kv);
  try {
    assert.equal(report.rebuilt, 1);
    return await rankings(backend, await queries());
  } finally {
    await backend.close();
  }
}

Deno.test("a store of the previous format loads, answers as rebuilt, and migrates", async () => {
  const path = await copy();
  try {
    let first;
    {
      const kv = await openKvStore(path);
      const record = await kv.get(["e", NS, "note-1"]);
      assert.ok(record && record.bytes === undefined); // JSON, as written then
      const head = (await kv.get(["x", NS]))?.value;
      assert.ok(head && typeof head === "object" && !Array.isArray(head));
      assert.equal(head.format, 2);
      const { backend, report } = await openReporting(kv);
      try {
        assert.deepEqual(
          [report.loaded, report.rebuilt, report.replayed, report.entries],
          [1, 0, 20, ENTRIES],
        );
        first = await rankings(backend, await queries());
        assert.ok(first.some((r) => r.lexical.length && r.vector.length));
        const entry = await backend.get(NS, "note-1");
        assert.ok(entry && entry.value.endsWith(" v1"));
        assert.equal(entry.embedding?.vector.length, 256);
        assert.equal(await backend.get(NS, "note-2"), null);
        // A write migrates its record; a save writes a snapshot of format 3.
        await backend.put(
          { ...entry, value: `${entry.value} again` },
          "upsert",
        );
        assert.equal(await backend.saveIndex(NS), true);
      } finally {
        await backend.close();
      }
    }
    const kv = await openKvStore(path);
    assert.ok((await kv.get(["e", NS, "note-1"]))?.bytes);
    assert.ok((await kv.get(["e", NS, "note-3"]))?.bytes === undefined);
    const head = (await kv.get(["x", NS]))?.value;
    assert.ok(head && typeof head === "object" && !Array.isArray(head));
    assert.equal(head.format, 3);
    assert.equal((await kv.list(["j", NS])).entries.length, 0);
    const { backend, report } = await openReporting(kv);
    let second;
    try {
      assert.deepEqual([report.loaded, report.replayed], [1, 0]);
      second = await rankings(backend, await queries());
      // Old JSON records still give their vector; the migrated one from the snapshot.
      assert.equal(
        (await backend.get(NS, "note-3"))?.embedding?.vector.length,
        256,
      );
      assert.equal(
        (await backend.get(NS, "note-1"))?.embedding?.vector.length,
        256,
      );
    } finally {
      await backend.close();
    }
    assert.deepEqual(second, await rebuilt(path));
    // Before the write of note-1 the answers were those of a rebuild of the old store too.
    const again = await copy();
    try {
      assert.deepEqual(first, await rebuilt(again));
    } finally {
      await Deno.remove(join(again, ".."), { recursive: true });
    }
  } finally {
    await Deno.remove(join(path, ".."), { recursive: true });
  }
});
