// The change mark of a Deno KV file (platform/store/kv_change_mark.ts): the same
// while nobody commits, whatever is read; different once any connection, in
// this process or another, has committed.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  KvChangeMark,
  markChange,
  OwnCommits,
} from "../../../platform/store/kv_change_mark.ts";
import { openKvStore } from "../../../platform/store/kv.ts";
import {
  scoped,
  type Store,
  type StoreKey,
} from "../../../platform/store/mod.ts";
import { VersionReader } from "../../../platform/store/version.ts";
import { ROOT, tempDir } from "../../helpers.ts";

/** Runs one commit to the KV file at `path` from a separate Deno process. */
async function commitFromChild(path: string): Promise<void> {
  const child = await new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      "--unstable-kv",
      `const kv = await Deno.openKv(${JSON.stringify(path)});
       await kv.set(["from", "child"], Date.now());
       kv.close();`,
    ],
    cwd: ROOT,
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  assert.ok(child.success);
}

/** Two stores on one KV file: two connections, as two daemons would have. */
function openTwo(path: string) {
  return Promise.all([openKvStore(path), openKvStore(path)]);
}

Deno.test("KvStore change mark: reads keep it; commits by this, another connection or another process change it", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "store.kv");
  const [store, other] = await openTwo(path);
  try {
    await store.set(["seed"], 1);
    const first = store.changeMark();
    assert.ok(first !== undefined, "a KV file has a change mark");
    await store.get(["seed"]);
    await store.list([], { limit: 10 });
    await other.getMany([["seed"], ["absent"]]);
    assert.equal(store.changeMark(), first, "reads leave the mark alone");
    assert.equal(scoped(store, ["x"]).changeMark?.(), first, "scoped: same");

    await store.set(["seed"], 2);
    const second = store.changeMark();
    assert.notEqual(second, first, "own commit");
    assert.equal(store.changeMark(), second);

    await other.commit({ mutations: [{ type: "delete", key: ["seed"] }] });
    const third = store.changeMark();
    assert.notEqual(third, second, "another connection's commit");

    await commitFromChild(path);
    const fourth = store.changeMark();
    assert.notEqual(fourth, third, "another process's commit");
    // That process closed the file: the header this process reads is still the live one.
    await other.set(["after"], 1);
    assert.notEqual(store.changeMark(), fourth, "a commit after it left");
  } finally {
    await Promise.all([store.close(), other.close()]);
  }
  assert.equal(store.changeMark(), undefined, "closed: no mark");
});

Deno.test("KvStore change mark: none for an in-memory KV", async () => {
  const store = await openKvStore(":memory:");
  try {
    await store.set(["k"], 1);
    assert.equal(store.changeMark(), undefined);
  } finally {
    await store.close();
  }
});

// Closing any descriptor of a file drops the process's POSIX locks on it: a
// mark must not take SQLite's -shm locks away from a connection still open.
Deno.test({
  name:
    "KvStore change mark: closing one of two stores on a file keeps SQLite's -shm locks of the other",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    await using dir = await tempDir();
    const path = join(dir.path, "store.kv");
    const [kept, closed] = await openTwo(path);
    try {
      await kept.set(["seed"], 1);
      await closed.get(["seed"]);
      assert.ok(kept.changeMark() !== undefined);
      assert.ok(closed.changeMark() !== undefined);
      const inode = Deno.statSync(`${path}-shm`).ino;
      const held = () =>
        Deno.readTextFileSync("/proc/locks").split("\n").some((line) => {
          const fields = line.trim().split(/\s+/);
          return fields[4] === String(Deno.pid) &&
            fields[5]?.endsWith(`:${inode}`);
        });
      assert.ok(
        held(),
        "SQLite holds a lock on the -shm while a store is open",
      );
      await closed.close();
      assert.ok(held(), "the open store's connection keeps its -shm lock");
      await kept.set(["seed"], 2);
      assert.ok(kept.changeMark() !== undefined);
    } finally {
      await kept.close();
    }
  },
});

/** Lines of /proc/self/maps that map `path`. */
function mappingsOf(path: string): number {
  return Deno.readTextFileSync("/proc/self/maps").split("\n")
    .filter((line) => line.endsWith(` ${path}`)).length;
}

// Where FFI is allowed the header is read through a mapping of its own (no
// system call per read), else with read(2): both give the same verdicts.
for (const map of [true, false]) {
  Deno.test({
    name: `KvChangeMark (${
      map ? "mapped" : "read(2)"
    }): the same while nobody commits, a new mark after each commit; unmapped at close`,
    ignore: Deno.build.os !== "linux",
    fn: async () => {
      await using dir = await tempDir();
      const path = join(dir.path, "store.kv");
      const kv = await Deno.openKv(path);
      const shm = `${Deno.realPathSync(path)}-shm`;
      const mark = new KvChangeMark(path, { map });
      try {
        await kv.set(["seed"], 1);
        const before = mappingsOf(shm);
        const first = mark.read();
        assert.ok(first !== undefined);
        assert.equal(
          mappingsOf(shm),
          before + (map ? 1 : 0),
          map ? "the header is mapped" : "nothing is mapped",
        );
        await kv.get(["seed"]);
        assert.equal(mark.read(), first, "a read leaves it");
        const counted = markChange(mark.read() ?? "");
        assert.ok(counted !== undefined, "the commit counter is read");
        await kv.set(["seed"], 2);
        const second = mark.read();
        assert.ok(second !== undefined && second !== first, "a commit");
        assert.equal(mark.read(), second);
        assert.equal(
          markChange(mark.read() ?? ""),
          counted + 1,
          "one commit, one count",
        );
        await kv.atomic().set(["a"], 1).set(["b"], 2).commit();
        await kv.atomic().check({ key: ["a"], versionstamp: null }).set(
          ["a"],
          3,
        ).commit();
        assert.equal(
          markChange(mark.read() ?? ""),
          counted + 2,
          "an atomic commit counts once; a failed check not at all",
        );
      } finally {
        kv.close();
        mark.close();
      }
      assert.equal(mark.read(), undefined, "closed: no mark");
      assert.equal(mappingsOf(shm), 0, "nothing of the file stays mapped");
    },
  });
}

Deno.test("KvStore unchangedBetween: only this store's own commits that left the key alone", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "store.kv");
  const [store, other] = await openTwo(path);
  try {
    await store.set(["k"], 1);
    const start = store.changeMark();
    assert.ok(start !== undefined);
    assert.equal(store.unchangedBetween(start, start, ["k"]), true);

    await store.set(["j"], 1);
    await store.commit({
      mutations: [{ type: "set", key: ["s", "x"], value: 1 }],
    });
    const own = store.changeMark();
    assert.ok(own !== undefined && own !== start);
    assert.equal(
      store.unchangedBetween(start, own, ["k"]),
      true,
      "own, other keys",
    );
    assert.equal(
      store.unchangedBetween(start, own, ["j"]),
      false,
      "own, this key",
    );
    const view = scoped(store, ["s"]);
    assert.equal(
      view.unchangedBetween?.(start, own, ["x"]),
      false,
      "scoped: its key",
    );
    assert.equal(
      view.unchangedBetween?.(start, own, ["k"]),
      true,
      "scoped: another",
    );

    await other.set(["elsewhere"], 1);
    const foreign = store.changeMark();
    assert.ok(foreign !== undefined);
    assert.equal(
      store.unchangedBetween(own, foreign, ["k"]),
      false,
      "another connection committed",
    );
    assert.equal(store.unchangedBetween(start, foreign, ["k"]), false);

    await commitFromChild(path);
    const child = store.changeMark();
    assert.ok(child !== undefined);
    assert.equal(
      store.unchangedBetween(foreign, child, ["k"]),
      false,
      "another process committed",
    );
  } finally {
    await Promise.all([store.close(), other.close()]);
  }
});

/** A view of `store` that counts its gets and passes its change mark on. */
function countingGets(store: Store): Store & { gets: number } {
  const counted = {
    kind: store.kind,
    gets: 0,
    changeMark: () => store.changeMark?.(),
    unchangedBetween: (from: string, to: string, key: StoreKey) =>
      store.unchangedBetween?.(from, to, key) ?? false,
    get(key: StoreKey) {
      counted.gets++;
      return store.get(key);
    },
    getMany: (keys: readonly StoreKey[]) => store.getMany(keys),
    set: (key: StoreKey, value: number) => store.set(key, value),
    delete: (key: StoreKey) => store.delete(key),
    list: (prefix: StoreKey) => store.list(prefix),
    commit: (op: Parameters<Store["commit"]>[0]) => store.commit(op),
    flush: () => store.flush(),
    close: () => store.close(),
  };
  return counted;
}

Deno.test("VersionReader on a KV file: no get after own commits of other keys; a get after own writes of the key and after anyone else's commit", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "store.kv");
  const [store, other] = await openTwo(path);
  const KEY = ["version"];
  try {
    const counted = countingGets(store);
    const reader = new VersionReader(counted, KEY);
    const first = await store.set(KEY, 1);
    assert.equal(await reader.read(), first);
    assert.equal(counted.gets, 1);

    for (let i = 0; i < 3; i++) await store.set(["turn", i], i);
    assert.equal(await reader.read(), first);
    assert.equal(counted.gets, 1, "own commits of other keys: no get");

    const second = await store.set(KEY, 2);
    assert.equal(await reader.read(), second, "own write of the key is seen");
    assert.equal(counted.gets, 2);

    const third = await other.set(KEY, 3);
    assert.equal(await reader.read(), third, "another connection's write");
    assert.equal(counted.gets, 3);

    await store.set(["turn", 9], 9);
    await commitFromChild(path);
    await store.set(["turn", 10], 10);
    assert.equal(await reader.read(), third);
    assert.equal(counted.gets, 4, "another process's commit in between: a get");

    // Own commits at once: the counter cannot tell them apart, so they count
    // as unknown (a get), and the answer stays right.
    await Promise.all([
      store.set(["turn", 11], 11),
      store.set(["turn", 12], 12),
      store.set(["turn", 13], 13),
    ]);
    assert.equal(await reader.read(), third);
  } finally {
    await Promise.all([store.close(), other.close()]);
  }
});

Deno.test("OwnCommits: a commit is pinned only when the counter moved by one across it", () => {
  const own = new OwnCommits();
  assert.equal(own.pin("1.10", "2.11", ["a"]), true);
  assert.equal(own.unchangedBetween("1.10", "2.11", "b"), true);
  assert.equal(own.unchangedBetween("1.10", "2.11", "a"), false, "wrote it");
  // Another commit in the window: the counter moved by two, and neither value
  // can be told to be this one's.
  assert.equal(own.pin("2.11", "3.13", ["a"]), false);
  assert.equal(own.unchangedBetween("2.11", "3.13", "b"), false);
  assert.equal(own.unchangedBetween("2.12", "3.13", "b"), false, "13 unpinned");
  assert.equal(own.pin("3.13", "4.14", ["c"]), true);
  assert.equal(own.unchangedBetween("3.13", "4.14", "b"), true);
  assert.equal(
    own.unchangedBetween("1.10", "4.14", "b"),
    false,
    "12, 13 unknown",
  );
  assert.equal(own.pin(undefined, "5.15", ["c"]), false, "no mark before");
  assert.equal(own.pin("4.14", undefined, ["c"]), false, "none after (failed)");
  assert.equal(own.pin("4", "5.15", ["c"]), false, "a torn mark before");
  assert.equal(own.unchangedBetween("4.14", "5.15", "b"), false);
  assert.equal(own.unchangedBetween("4", "5.15", "b"), false, "a torn mark");
  assert.equal(own.pin("6.4294967295", "7.0", ["d"]), true);
  assert.equal(own.unchangedBetween("6.4294967295", "7.0", "b"), true, "wraps");
  // A commit of many keys is pinned, but its keys are not kept: any key may
  // have changed (memory stays bounded).
  const many = Array.from({ length: 500 }, (_, i) => `k${i}`);
  assert.equal(own.pin("7.0", "8.1", many), true);
  assert.equal(own.unchangedBetween("7.0", "8.1", "b"), false);
});
