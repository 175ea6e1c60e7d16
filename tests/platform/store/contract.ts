/** Behaviour every Store implementation must share; see store_test.ts. */
import assert from "node:assert/strict";
import {
  type JsonValue,
  MAX_COMMIT_KEYS,
  MAX_VALUE_BYTES,
  MIB,
  type Mutation,
  scoped,
  type Store,
  StoreError,
  type StoreKey,
} from "../../../platform/store/mod.ts";

export type OpenStore = () => Promise<
  { store: Store; cleanup: () => Promise<void> }
>;

export function storeContract(name: string, open: OpenStore): void {
  function test(title: string, fn: (store: Store) => Promise<void>): void {
    Deno.test(`${name}: ${title}`, async () => {
      const { store, cleanup } = await open();
      try {
        await fn(store);
      } finally {
        await cleanup();
      }
    });
  }

  test("get of a missing key is null", async (store) => {
    assert.equal(await store.get(["missing"]), null);
  });

  test("set then get round-trips JSON and the version", async (store) => {
    const value: JsonValue = {
      s: "héllo \u0000 ✓",
      n: -1.5,
      b: true,
      z: null,
      a: [1, "two", { three: [] }],
    };
    const version = await store.set(["a", 1], value);
    assert.equal(typeof version, "string");
    assert.deepEqual(await store.get(["a", 1]), {
      key: ["a", 1],
      value,
      version,
    });
  });

  test("returned values are copies", async (store) => {
    await store.set(["k"], { list: [1] });
    const value = (await store.get(["k"]))?.value;
    assert.ok(value && typeof value === "object" && !Array.isArray(value));
    value.list = "changed";
    assert.deepEqual((await store.get(["k"]))?.value, { list: [1] });
  });

  test("a set of a new key (newKey) writes like any set, big or small, with checks", async (store) => {
    const big = "n".repeat(300_000);
    const result = await store.commit({
      checks: [{ key: ["log", "absent"], version: null }],
      mutations: [
        { type: "set", key: ["log", "1"], value: { at: 1 }, newKey: true },
        { type: "set", key: ["log", "2"], value: big, newKey: true },
      ],
    });
    assert.equal(result.ok, true);
    const [one, two] = await store.getMany([["log", "1"], ["log", "2"]]);
    assert.deepEqual(one?.value, { at: 1 });
    assert.equal(two?.value, big);
    // A failed check still writes nothing.
    const failed = await store.commit({
      checks: [{ key: ["log", "1"], version: null }],
      mutations: [{ type: "set", key: ["log", "3"], value: 3, newKey: true }],
    });
    assert.deepEqual(failed, { ok: false });
    assert.equal(await store.get(["log", "3"]), null);
  });

  test("binary values round-trip as bytes, apart from JSON ones", async (store) => {
    const small = Uint8Array.from([0, 255, 0x7b, 0x22, 1]);
    const empty = new Uint8Array(0);
    // Larger than one inline KV value: chunked like any other value.
    const large = Uint8Array.from({ length: 200_000 }, (_, i) => i * 7);
    const version = await store.set(["b", "small"], small);
    await store.commit({
      mutations: [
        { type: "set", key: ["b", "empty"], value: empty },
        { type: "set", key: ["b", "large"], value: large },
        { type: "set", key: ["b", "json"], value: "\u0000text" },
      ],
    });
    assert.deepEqual(await store.get(["b", "small"]), {
      key: ["b", "small"],
      value: null,
      bytes: small,
      version,
    });
    const many = await store.getMany([["b", "empty"], ["b", "large"]]);
    assert.deepEqual(many.map((e) => e?.bytes), [empty, large]);
    const page = await store.list(["b"]);
    assert.deepEqual(
      page.entries.map((e) => [e.key[1], e.bytes?.length ?? e.value]),
      [["empty", 0], ["json", "\u0000text"], ["large", 200_000], [
        "small",
        5,
      ]],
    );
    // A copy: changing what a read returned changes nothing stored.
    const read = await store.get(["b", "small"]);
    read?.bytes?.fill(9);
    assert.deepEqual((await store.get(["b", "small"]))?.bytes, small);
    small.fill(3);
    assert.deepEqual(
      (await store.get(["b", "small"]))?.bytes,
      Uint8Array.from([0, 255, 0x7b, 0x22, 1]),
    );
  });

  test("overwriting changes the version; delete removes", async (store) => {
    const v1 = await store.set(["k"], 1);
    const v2 = await store.set(["k"], 2);
    assert.notEqual(v1, v2);
    assert.equal((await store.get(["k"]))?.version, v2);
    await store.delete(["k"]);
    await store.delete(["k"]); // deleting a missing key is fine
    assert.equal(await store.get(["k"]), null);
  });

  test("getMany keeps order, returns null for missing, takes > 10 keys", async (store) => {
    const keys: StoreKey[] = [];
    for (let i = 0; i < 25; i++) {
      keys.push(["m", i]);
      if (i % 3 === 0) await store.set(["m", i], i);
    }
    const entries = await store.getMany(keys);
    assert.equal(entries.length, 25);
    entries.forEach((entry, i) => {
      assert.deepEqual(
        entry && [entry.key, entry.value],
        i % 3 === 0 ? [["m", i], i] : null,
      );
    });
  });

  test("list returns entries strictly under the prefix in key order", async (store) => {
    const keys: StoreKey[] = [
      ["p"],
      ["p", 10],
      ["p", -2],
      ["p", "b"],
      ["p", "a", "x"],
      ["p", "a"],
      ["p", "a\u0000"],
      ["p", 1.5],
      ["pp", "outside"],
      ["o"],
    ];
    for (const key of keys) await store.set(key, key.length);
    const page = await store.list(["p"]);
    assert.deepEqual(page.entries.map((e) => e.key), [
      ["p", "a"],
      ["p", "a", "x"],
      ["p", "a\u0000"],
      ["p", "b"],
      ["p", -2],
      ["p", 1.5],
      ["p", 10],
    ]);
    assert.equal(page.cursor, null);
    assert.equal((await store.list([])).entries.length, keys.length);
    assert.deepEqual(await store.list(["nothing"]), {
      entries: [],
      cursor: null,
    });
  });

  test("list pages with cursors, forwards and in reverse", async (store) => {
    for (let i = 0; i < 25; i++) await store.set(["page", i], i);
    await store.set(["pagez"], "outside");
    for (const reverse of [false, true]) {
      const seen: JsonValue[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await store.list(["page"], { limit: 10, cursor, reverse });
        seen.push(...page.entries.map((e) => e.value));
        cursor = page.cursor ?? undefined;
        pages++;
      } while (cursor !== undefined);
      const expected = Array.from({ length: 25 }, (_, i) => i);
      assert.deepEqual(seen, reverse ? expected.reverse() : expected);
      assert.equal(pages, 3);
    }
    const exact = await store.list(["page"], { limit: 25 });
    assert.equal(exact.entries.length, 25);
    assert.equal(exact.cursor, null);
  });

  test("list limit defaults to 100 and must be 1..1000", async (store) => {
    await store.commit({
      mutations: Array.from(
        { length: 100 },
        (_, i) => ({ type: "set", key: ["l", i], value: i }),
      ),
    });
    await store.set(["l", 100], 100);
    const page = await store.list(["l"]);
    assert.equal(page.entries.length, 100);
    assert.ok(page.cursor);
    for (const limit of [0, 1001, 1.5, -1, NaN]) {
      await assert.rejects(store.list(["l"], { limit }), StoreError);
    }
    await assert.rejects(store.list(["l"], { cursor: "%%%" }), StoreError);
  });

  test("commit applies checks and mutations atomically", async (store) => {
    const v = await store.set(["acct", "a"], 10);
    const ok = await store.commit({
      checks: [{ key: ["acct", "a"], version: v }, {
        key: ["acct", "b"],
        version: null,
      }],
      mutations: [
        { type: "set", key: ["acct", "a"], value: 5 },
        { type: "set", key: ["acct", "b"], value: 5 },
      ],
    });
    assert.ok(ok.ok);
    const [a, b] = await store.getMany([["acct", "a"], ["acct", "b"]]);
    assert.equal(a?.version, ok.version);
    assert.equal(b?.value, 5);

    // The old version is stale now, so nothing in this commit may apply.
    const stale = await store.commit({
      checks: [{ key: ["acct", "a"], version: v }],
      mutations: [{ type: "set", key: ["acct", "c"], value: 1 }, {
        type: "delete",
        key: ["acct", "b"],
      }],
    });
    assert.deepEqual(stale, { ok: false });
    assert.equal(await store.get(["acct", "c"]), null);
    assert.equal((await store.get(["acct", "b"]))?.value, 5);
    const exists = await store.commit({
      checks: [{ key: ["acct", "b"], version: null }],
      mutations: [],
    });
    assert.deepEqual(exists, { ok: false });
  });

  test("a check passes until someone else writes the key", async (store) => {
    const version = await store.set(["c"], 1);
    await store.set(["other"], 1);
    const listed = (await store.list([])).entries.find((e) => e.key[0] === "c");
    assert.equal(listed?.version, version);
    const check = { key: ["c"], version };
    assert.ok((await store.commit({ checks: [check], mutations: [] })).ok);
    await store.set(["c"], 2);
    assert.equal(
      (await store.commit({ checks: [check], mutations: [] })).ok,
      false,
    );
  });

  test("a check at a version getMany read fails once the key changed", async (store) => {
    await store.set(["g", "a"], 1);
    const [read, absent] = await store.getMany([["g", "a"], ["g", "b"]]);
    assert.ok(read);
    assert.equal(absent, null);
    const checks = [{ key: ["g", "a"], version: read.version }, {
      key: ["g", "b"],
      version: null,
    }];
    await store.set(["g", "a"], 2);
    const stale = await store.commit({
      checks,
      mutations: [{ type: "set", key: ["g", "c"], value: 1 }],
    });
    assert.deepEqual(stale, { ok: false });
    const [again] = await store.getMany([["g", "a"]]);
    await store.set(["g", "b"], 1); // the key checked absent appears
    const appeared = await store.commit({
      checks: [{ key: ["g", "a"], version: again?.version ?? null }, checks[1]],
      mutations: [{ type: "set", key: ["g", "c"], value: 1 }],
    });
    assert.deepEqual(appeared, { ok: false });
    assert.equal(await store.get(["g", "c"]), null);
    const [now, b] = await store.getMany([["g", "a"], ["g", "b"]]);
    assert.ok(
      (await store.commit({
        checks: [
          { key: ["g", "a"], version: now?.version ?? null },
          { key: ["g", "b"], version: b?.version ?? null },
        ],
        mutations: [{ type: "set", key: ["g", "c"], value: 1 }],
      })).ok,
    );
  });

  test("the last mutation of a key in a commit wins", async (store) => {
    await store.commit({
      mutations: [
        { type: "set", key: ["dup"], value: 1 },
        { type: "delete", key: ["dup"] },
        { type: "set", key: ["dup"], value: 3 },
        { type: "set", key: ["gone"], value: 1 },
        { type: "delete", key: ["gone"] },
      ],
    });
    assert.equal((await store.get(["dup"]))?.value, 3);
    assert.equal(await store.get(["gone"]), null);
  });

  test("large values round-trip, alone and many in one commit", async (store) => {
    const big = "x".repeat(200 * 1024);
    const v = await store.set(["big"], big);
    assert.deepEqual(await store.get(["big"]), {
      key: ["big"],
      value: big,
      version: v,
    });
    // 2 MiB in all: more than one Deno KV atomic write can carry.
    const values = Array.from(
      { length: 40 },
      (_, i) => `${i}`.padEnd(50 * 1024, "y"),
    );
    const mutations: Mutation[] = values.map((value, i) => ({
      type: "set",
      key: ["many", i],
      value,
    }));
    assert.ok((await store.commit({ mutations })).ok);
    const page = await store.list(["many"], { limit: 1000 });
    assert.deepEqual(page.entries.map((e) => e.value), values);
    await store.set(["big"], "small now");
    assert.equal((await store.get(["big"]))?.value, "small now");
  });

  test("a value of exactly 32 MiB is accepted, one byte more is not", async (store) => {
    const max = "z".repeat(MAX_VALUE_BYTES - 2); // JSON adds two quotes
    await store.set(["max"], max);
    assert.equal((await store.get(["max"]))?.value, max);
    await assert.rejects(store.set(["max"], `${max}z`), StoreError);
    assert.equal((await store.get(["max"]))?.value, max);
  });

  test("too large values fail with a clear message", async (store) => {
    const size = Math.round(40.2 * MIB);
    await assert.rejects(store.set(["a", "b"], "v".repeat(size - 2)), {
      name: "StoreError",
      message:
        'Value too large: 40.2 MiB exceeds the 32 MiB limit for key ["a","b"]',
    });
    assert.equal(await store.get(["a", "b"]), null);
  });

  test("invalid keys fail with clear messages", async (store) => {
    await assert.rejects(store.get([]), { message: "Key must not be empty" });
    await assert.rejects(store.set(["k".repeat(2500)], 1), {
      name: "StoreError",
      message:
        /^Key too long: 2502 bytes exceeds the 2000-byte limit for key \["kkk/,
    });
    await assert.rejects(store.set(["n", NaN], 1), StoreError);
    await assert.rejects(store.set(["bad\ud800"], 1), StoreError);
    await assert.rejects(
      store.commit({ checks: [{ key: [], version: null }], mutations: [] }),
      StoreError,
    );
  });

  test("commits touching too many keys are rejected whole", async (store) => {
    const mutations: Mutation[] = Array.from(
      { length: MAX_COMMIT_KEYS + 1 },
      (_, i) => ({
        type: "set",
        key: ["t", i],
        value: i,
      }),
    );
    await assert.rejects(store.commit({ mutations }), {
      message:
        `Too many keys in one commit: 101 exceeds the limit of ${MAX_COMMIT_KEYS}`,
    });
    assert.equal((await store.list(["t"])).entries.length, 0);
    assert.ok((await store.commit({ mutations: mutations.slice(1) })).ok);
  });

  test("scoped views prepend and strip their prefix", async (store) => {
    const tenant = scoped(store, ["tenant", 7]);
    const nested = scoped(tenant, ["jobs"]);
    const version = await nested.set(["j1"], "run");
    await store.set(["tenant", 8, "jobs", "j2"], "other tenant");
    assert.deepEqual(await nested.get(["j1"]), {
      key: ["j1"],
      value: "run",
      version,
    });
    assert.equal((await store.get(["tenant", 7, "jobs", "j1"]))?.value, "run");
    assert.deepEqual((await tenant.list([])).entries.map((e) => e.key), [[
      "jobs",
      "j1",
    ]]);
    assert.deepEqual(
      (await nested.getMany([["j1"], ["nope"]])).map((e) => e?.key ?? null),
      [
        ["j1"],
        null,
      ],
    );
    const result = await nested.commit({
      checks: [{ key: ["j1"], version }],
      mutations: [{ type: "delete", key: ["j1"] }],
    });
    assert.ok(result.ok);
    assert.equal(await store.get(["tenant", 7, "jobs", "j1"]), null);
    await assert.rejects(nested.get([]), StoreError);
    await nested.close();
    await assert.rejects(nested.get(["j1"]), { message: "Store is closed" });
    assert.equal(
      (await store.get(["tenant", 8, "jobs", "j2"]))?.value,
      "other tenant",
    );
  });

  test("flush waits for writes in flight", async (store) => {
    const writes = Array.from(
      { length: 5 },
      (_, i) => store.set(["f", i], "w".repeat(i * 40_000)),
    );
    await store.flush();
    const versions = await Promise.all(writes);
    const entries = await store.getMany(versions.map((_, i) => ["f", i]));
    assert.deepEqual(entries.map((e) => e?.version), versions);
  });

  test("close flushes, and later calls reject", async (store) => {
    const write = store.set(["last"], "w".repeat(100_000));
    await store.close();
    await write;
    await store.close(); // idempotent
    await assert.rejects(store.get(["last"]), { message: "Store is closed" });
    await assert.rejects(store.set(["x"], 1), { message: "Store is closed" });
    await assert.rejects(store.list([]), { message: "Store is closed" });
    await assert.rejects(store.flush(), { message: "Store is closed" });
  });
}
