// KvStore keeps values written blind (`newKey`) inline even when a commit's
// other values overflow its byte budget: the key's next blind write reads no
// header, so chunks of a value stored there would be left behind for good.

import assert from "node:assert/strict";
import { join } from "node:path";
import { openKvStore } from "../../../platform/store/kv.ts";
import type { Mutation } from "../../../platform/store/mod.ts";
import { tempDir } from "../../helpers.ts";

Deno.test("KvStore: a blind write stays inline when the commit's other values fill the budget", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "store.kv");
  const store = await openKvStore(path);
  try {
    const mutations: Mutation[] = [];
    // Well past one atomic write's bytes: some of these go to chunks.
    for (let i = 0; i < 20; i++) {
      mutations.push({
        type: "set",
        key: ["e", `big${i}`],
        value: new Uint8Array(59 * 1024),
      });
    }
    // Small values that use up whatever room the big ones leave.
    for (let i = 0; i < 70; i++) {
      mutations.push({
        type: "set",
        key: ["e", `small${i}`],
        value: new Uint8Array(1024),
      });
    }
    // Last, as a journal row comes after its entry.
    mutations.push({
      type: "set",
      key: ["j", "row"],
      value: new Uint8Array(2048),
      newKey: true,
    });
    assert.ok((await store.commit({ mutations })).ok);

    const kv = await Deno.openKv(path);
    try {
      const header = (await kv.get(["d", "j", "row"])).value;
      assert.ok(header instanceof Uint8Array, "stored inline, not as chunks");
      const chunked = (await kv.get(["d", "e", "big19"])).value;
      assert.ok(!(chunked instanceof Uint8Array), "the budget did overflow");
    } finally {
      kv.close();
    }
    const row = await store.get(["j", "row"]);
    assert.equal(row?.bytes?.length ?? 0, 2048);
  } finally {
    await store.close();
  }
});
