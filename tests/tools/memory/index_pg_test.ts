// The persisted search index on the PostgreSQL Store (a daemon whose store is
// postgres:// keeps its local memory backend there): saved, loaded after a
// restart, and equal to an index rebuilt from the entries.

import assert from "node:assert/strict";
import { PgStore } from "../../../platform/store/pg.ts";
import { pgTestIgnore, startPgServer } from "../../pg_server.ts";
import {
  entry,
  NS,
  openReporting,
  queries,
  rankings,
} from "./index_fixture.ts";

Deno.test({
  name:
    "persisted index on PostgreSQL: a restart loads it and answers as a rebuilt one",
  ignore: pgTestIgnore(),
  async fn() {
    const server = await startPgServer();
    try {
      const url = await server.createDatabase("index_persist");
      const connect = () => PgStore.connect({ url, password: server.password });
      {
        const { backend } = await openReporting(await connect());
        const writes: Promise<unknown>[] = [];
        for (let i = 0; i < 300; i++) {
          writes.push(backend.put(await entry(i), "upsert"));
        }
        await Promise.all(writes);
        for (let i = 0; i < 300; i += 9) await backend.delete(NS, `note-${i}`);
        await backend.close();
      }
      let loaded;
      {
        const { backend, report } = await openReporting(await connect());
        try {
          assert.equal(report.loaded, 1);
          assert.equal(report.rebuilt, 0);
          assert.equal(report.entries, 300 - 34);
          loaded = await rankings(backend, await queries());
          assert.ok(loaded.some((r) => r.lexical.length > 0));
          assert.ok(loaded.some((r) => r.vector.length > 0));
        } finally {
          await backend.close();
        }
      }
      // Rebuilt from the entries, the vectors from the snapshot: marked as another tokenizer's.
      const store = await connect();
      const head = (await store.get(["x", NS]))?.value;
      assert.ok(head && typeof head === "object" && !Array.isArray(head));
      await store.set(["x", NS], { ...head, tokenizer: "0" });
      const { backend, report } = await openReporting(store);
      try {
        assert.equal(report.rebuilt, 1);
        assert.deepEqual(await rankings(backend, await queries()), loaded);
      } finally {
        await backend.close();
      }
    } finally {
      await server.destroy();
    }
  },
});
