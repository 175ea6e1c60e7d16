// Several daemons may share one Deno KV file (a coordination store, a
// common data dir). SQLite then answers "database is locked" while another
// connection writes; the store waits and retries instead of failing.

import assert from "node:assert/strict";
import { join } from "node:path";
import { openKvStore } from "../../../platform/store/kv.ts";
import { tempDir } from "../../helpers.ts";

Deno.test("KvStore: two handles on one file write and list concurrently without lock errors", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "shared.kv");
  const stores = await Promise.all([openKvStore(path), openKvStore(path)]);
  try {
    await Promise.all(stores.map(async (store, who) => {
      for (let i = 0; i < 150; i++) {
        const key = ["items", who, i];
        const result = await store.commit({
          checks: [{ key, version: null }],
          mutations: [{ type: "set", key, value: { who, i } }],
        });
        assert.ok(result.ok);
        await store.list(["items"], { limit: 50 });
      }
    }));
    for (const store of stores) {
      for (const who of [0, 1]) {
        const page = await store.list(["items", who], { limit: 1000 });
        assert.equal(page.entries.length, 150);
      }
    }
  } finally {
    await Promise.all(stores.map((store) => store.close()));
  }
});
