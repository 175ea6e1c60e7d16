// VersionReader on a store with a change mark: no get while the mark holds;
// a commit that lands while a get is under way (after that get's mark was
// read) makes the next read get again, even though that get answered the
// old version.

import assert from "node:assert/strict";
import { MemoryStore } from "../../../platform/store/memory.ts";
import type { Store, StoreKey } from "../../../platform/store/mod.ts";
import { VersionReader } from "../../../platform/store/version.ts";

const KEY = ["catalog_version", "agent"];

/** A memory store whose change mark counts commits, and whose gets can be held before they read. */
function markedStore() {
  const inner = new MemoryStore();
  let commits = 0;
  const store = {
    kind: "marked",
    gets: 0,
    /** While set, a get waits for it before reading. */
    hold: undefined as Promise<void> | undefined,
    changeMark: () => `${commits}`,
    async get(key: StoreKey) {
      store.gets++;
      await store.hold;
      return await inner.get(key);
    },
    getMany: (keys: readonly StoreKey[]) => inner.getMany(keys),
    set: async (key: StoreKey, value: string) => {
      const version = await inner.set(key, value);
      commits++;
      return version;
    },
    delete: (key: StoreKey) => inner.delete(key),
    list: (prefix: StoreKey) => inner.list(prefix),
    commit: (op: Parameters<Store["commit"]>[0]) => inner.commit(op),
    flush: () => inner.flush(),
    close: () => inner.close(),
  };
  return store;
}

Deno.test("VersionReader: with a change mark, reads make no get until a commit finishes", async () => {
  const store = markedStore();
  const reader = new VersionReader(store, KEY);
  const first = await store.set(KEY, "a");
  assert.equal(await reader.read(), first);
  assert.equal(store.gets, 1);
  for (let i = 0; i < 5; i++) assert.equal(await reader.read(), first);
  assert.equal(store.gets, 1, "unchanged mark: no get");

  const second = await store.set(KEY, "b");
  assert.equal(await reader.read(), second, "a finished commit is seen");
  assert.equal(store.gets, 2);
});

Deno.test("VersionReader: a commit landing during a get is seen by the next read", async () => {
  const store = markedStore();
  const reader = new VersionReader(store, KEY);
  const first = await store.set(KEY, "a");
  assert.equal(await reader.read(), first);
  // Another commit makes the mark differ: this read gets, but its get waits;
  // meanwhile (after the get took its mark) one more commit lands.
  await store.set(KEY, "b");
  const held = Promise.withResolvers<void>();
  store.hold = held.promise;
  const during = reader.read();
  store.hold = undefined;
  const third = await store.set(KEY, "c");
  held.resolve();
  assert.equal(await during, third, "this get read after the commit anyway");
  // Had the get read before the commit, its answer would be stale: the mark
  // it kept is the one from before the commit, so the next read gets again.
  const gets = store.gets;
  assert.equal(await reader.read(), third);
  assert.equal(
    store.gets,
    gets + 1,
    "the mark moved during the get: get again",
  );
  assert.equal(await reader.read(), third);
  assert.equal(store.gets, gets + 1, "and then no more");
});
