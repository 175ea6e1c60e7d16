import assert from "node:assert/strict";
import { MemoryStore } from "../../../platform/store/memory.ts";
import { DeferredBackend } from "../../../tools/memory/backends/deferred.ts";
import { KvBackend } from "../../../tools/memory/backends/kv.ts";
import type { MemoryBackend } from "../../../tools/memory/backends/port.ts";

const entry = {
  namespace: "n",
  key: "k",
  value: "v",
  tags: [],
  sensitive: false,
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:00.000Z",
  embedding: null,
};

Deno.test("DeferredBackend: calls wait for the open; health says it is loading", async () => {
  const { promise, resolve } = Promise.withResolvers<MemoryBackend>();
  const deferred = new DeferredBackend("local", promise);
  assert.deepEqual(await deferred.health(), {
    status: "ok",
    detail: "loading entries into the search index",
  });
  const written = deferred.put(entry, "upsert");
  let settled = false;
  written.then(() => settled = true);
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(settled, false, "a write waits until the backend is open");
  resolve(await KvBackend.open(new MemoryStore()));
  assert.equal(await written, null);
  assert.equal((await deferred.get("n", "k"))?.value, "v");
  assert.deepEqual(await deferred.health(), { status: "ok" });
  await deferred.close();
});

Deno.test("DeferredBackend: a failed open is reported by health and by every call", async () => {
  const deferred = new DeferredBackend(
    "local",
    Promise.reject(new Error("disk on fire")),
  );
  await assert.rejects(deferred.get("n", "k"), /disk on fire/);
  assert.deepEqual(await deferred.health(), {
    status: "down",
    detail: "Cannot open the store: disk on fire",
  });
  await deferred.close();
});
