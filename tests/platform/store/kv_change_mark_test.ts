// The change mark of a Deno KV file (platform/store/kv_change_mark.ts): the same
// while nobody commits, whatever is read; different once any connection, in
// this process or another, has committed.

import assert from "node:assert/strict";
import { join } from "node:path";
import { KvChangeMark } from "../../../platform/store/kv_change_mark.ts";
import { openKvStore } from "../../../platform/store/kv.ts";
import { scoped } from "../../../platform/store/mod.ts";
import { ROOT, tempDir } from "../../helpers.ts";

Deno.test("KvStore change mark: reads keep it; commits by this, another connection or another process change it", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "store.kv");
  const [store, other] = await Promise.all([
    openKvStore(path),
    openKvStore(path),
  ]);
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

    const child = await new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        "--unstable-kv",
        `const kv = await Deno.openKv(${JSON.stringify(path)});
         await kv.set(["from", "child"], 1);
         kv.close();`,
      ],
      cwd: ROOT,
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    assert.ok(child.success);
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
    const [kept, closed] = await Promise.all([
      openKvStore(path),
      openKvStore(path),
    ]);
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
        await kv.set(["seed"], 2);
        const second = mark.read();
        assert.ok(second !== undefined && second !== first, "a commit");
        assert.equal(mark.read(), second);
      } finally {
        kv.close();
        mark.close();
      }
      assert.equal(mark.read(), undefined, "closed: no mark");
      assert.equal(mappingsOf(shm), 0, "nothing of the file stays mapped");
    },
  });
}
