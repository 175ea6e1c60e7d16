// Commit riders: writes that may wait (the audit trail's records) join the
// next commit anyone makes on the store, through any scoped view, so they
// cost no disk sync of their own. A commit that fails hands them back
// unwritten; one near the limits takes none.

import assert from "node:assert/strict";
import { join } from "node:path";
import { openKvStore } from "../../../platform/store/kv.ts";
import { MemoryStore } from "../../../platform/store/memory.ts";
import {
  type CommitRide,
  type Mutation,
  scoped,
  type Store,
} from "../../../platform/store/mod.ts";
import { tempDir } from "../../helpers.ts";

/** A rider holding `waiting` records until a commit takes them; counts what landed. */
function rider(waiting: Mutation[]) {
  const seen = { boarded: 0, landed: 0, handedBack: 0, rooms: [] as number[] };
  return {
    seen,
    waiting,
    board(room: number): CommitRide | undefined {
      seen.rooms.push(room);
      if (waiting.length === 0) return undefined;
      const taken = waiting.splice(0, room);
      seen.boarded += taken.length;
      return {
        mutations: taken,
        landed: (ok: boolean) => {
          if (ok) seen.landed += taken.length;
          else {
            seen.handedBack += taken.length;
            waiting.unshift(...taken);
          }
        },
      };
    },
  };
}

const record = (i: number): Mutation => ({
  type: "set",
  key: ["audit", `r${i}`],
  value: { i },
  newKey: true,
});

async function eachStore(
  body: (store: Store) => Promise<void>,
): Promise<void> {
  await using dir = await tempDir();
  const kv = await openKvStore(join(dir.path, "store.kv"));
  try {
    await body(kv);
  } finally {
    await kv.close();
  }
  const memory = new MemoryStore();
  await body(memory);
  await memory.close();
}

Deno.test("commit riders: records join another view's commit, under their own view's prefix", async () => {
  await eachStore(async (store) => {
    const policy = scoped(store, ["agentd", "policy"]);
    const memory = scoped(store, ["svc-memory"]);
    const r = rider([record(1), record(2)]);
    const remove = policy.addCommitRider?.(r);
    assert.ok(remove, `${store.kind}: riders supported`);
    const committed = await memory.commit({
      mutations: [{ type: "set", key: ["s", "talk"], value: { count: 1 } }],
    });
    assert.ok(committed.ok);
    assert.equal(r.seen.landed, 2);
    assert.deepEqual(r.waiting, []);
    // Under the rider's view, with the commit's version; nothing under the other.
    const entry = await policy.get(["audit", "r1"]);
    assert.deepEqual(entry?.value, { i: 1 });
    assert.equal(entry?.version, committed.version);
    assert.equal(await memory.get(["audit", "r1"]), null);
    remove();
    await memory.commit({
      mutations: [{ type: "set", key: ["s", "talk"], value: { count: 2 } }],
    });
    assert.equal(r.seen.rooms.length, 1, "a removed rider is not asked");
  });
});

Deno.test("commit riders: a commit whose check fails hands the records back unwritten", async () => {
  await eachStore(async (store) => {
    const r = rider([record(1)]);
    store.addCommitRider?.(r);
    const failed = await store.commit({
      checks: [{ key: ["s", "talk"], version: "00000000000000000999" }],
      mutations: [{ type: "set", key: ["s", "talk"], value: { count: 1 } }],
    });
    assert.equal(failed.ok, false);
    assert.equal(r.seen.handedBack, 1);
    assert.equal(await store.get(["audit", "r1"]), null);
    // The next commit takes them.
    assert.ok(
      (await store.commit({
        mutations: [{ type: "set", key: ["other"], value: 1 }],
      })).ok,
    );
    assert.equal(r.seen.landed, 1);
    assert.deepEqual((await store.get(["audit", "r1"]))?.value, { i: 1 });
  });
});

Deno.test("commit riders: the room left is bounded by the commit's keys; a rider's bad or clashing writes are handed back", async () => {
  await eachStore(async (store) => {
    const r = rider(Array.from({ length: 120 }, (_, i) => record(i)));
    const remove = store.addCommitRider?.(r);
    const own: Mutation[] = Array.from({ length: 80 }, (_, i) => ({
      type: "set",
      key: ["e", i],
      value: i,
    }));
    assert.ok((await store.commit({ mutations: own })).ok);
    // 100 keys per commit: 80 are the commit's own.
    assert.deepEqual(r.seen.rooms, [20]);
    assert.equal(r.seen.landed, 20);
    assert.ok((await store.commit({ mutations: own.slice(0, 1) })).ok);
    assert.equal(r.seen.rooms[1], 50, "at most 50 riders per commit");
    assert.equal(r.seen.landed, 70);
    remove?.();

    // A write that is not a new key (it would need a check) does not board.
    const bad = rider([{ type: "set", key: ["e", 1], value: "clobbered" }]);
    const removeBad = store.addCommitRider?.(bad);
    assert.ok((await store.commit({ mutations: [own[2]] })).ok);
    assert.equal(bad.seen.handedBack, 1);
    assert.equal((await store.get(["e", 1]))?.value, 1);
    removeBad?.();
  });
});
