import assert from "node:assert/strict";
import { join } from "node:path";
import { createLogger } from "../../../platform/log.ts";
import { scoped, type Store } from "../../../platform/store/mod.ts";
import { openKvStore } from "../../../platform/store/kv.ts";
import { MemoryStore } from "../../../platform/store/memory.ts";
import { EntryNotFound } from "../../../tools/memory/backends/port.ts";
import { KvBackend } from "../../../tools/memory/backends/kv.ts";
import { DeferredBackend } from "../../../tools/memory/backends/deferred.ts";
import { MemoryService } from "../../../tools/memory/service.ts";
import {
  decodeEntry,
  encodeEntry,
  encodeStored,
} from "../../../tools/memory/backends/kv_records.ts";
import { BuiltinEmbedder } from "../../../tools/memory/embedder_builtin.ts";
import type {
  Message,
  SearchQuery,
  StoredEntry,
} from "../../../tools/memory/model.ts";
import { SearchIndex, tokenize } from "../../../tools/memory/search_index.ts";
import {
  decodeJournal,
  encodeJournal,
  journalId,
} from "../../../tools/memory/backends/entry_codec.ts";

const T0 = "2026-01-01T00:00:00.000Z";
const T1 = "2026-01-02T00:00:00.000Z";
const builtin = new BuiltinEmbedder();

function entry(
  key: string,
  value: string,
  more: Partial<StoredEntry> = {},
): StoredEntry {
  return {
    namespace: "ns",
    key,
    value,
    tags: [],
    sensitive: false,
    created_at: T0,
    updated_at: T0,
    embedding: null,
    ...more,
  };
}

async function embedded(
  key: string,
  value: string,
  more: Partial<StoredEntry> = {},
): Promise<StoredEntry> {
  const [vector] = await builtin.embed([value]);
  return entry(key, value, {
    embedding: { embedder: builtin.id, vector },
    ...more,
  });
}

async function searchQuery(text: string, limit = 10): Promise<SearchQuery> {
  const [vector] = await builtin.embed([text]);
  return { text, terms: tokenize(text), vector, embedder: builtin.id, limit };
}

/** Equal within int8 quantisation: half a step of the largest component / 127. */
function assertClose(
  actual: Float32Array | undefined,
  expected: Float32Array | undefined,
): void {
  assert.ok(actual && expected && actual.length === expected.length);
  const half = Math.max(...expected.map(Math.abs)) / 254 + 1e-7;
  for (let i = 0; i < expected.length; i++) {
    assert.ok(Math.abs(actual[i] - expected[i]) <= half, `component ${i}`);
  }
}

function message(content: string, role = "user"): Message {
  return { role, content, at: T0 };
}

interface Setup {
  store: Store;
  /** A fresh backend over the same data, as after a restart. */
  reopen?: () => Promise<Store>;
  cleanup: () => Promise<void>;
}

function memorySetup(): Promise<Setup> {
  const root = new MemoryStore();
  return Promise.resolve({
    store: scoped(root, ["svc-memory"]),
    cleanup: () => root.close(),
  });
}

async function kvSetup(): Promise<Setup> {
  const dir = await Deno.makeTempDir({ prefix: "backend_kv_test_" });
  const path = join(dir, "memory.kv");
  return {
    store: await openKvStore(path),
    reopen: () => openKvStore(path),
    cleanup: () => Deno.remove(dir, { recursive: true }),
  };
}

function contract(name: string, setup: () => Promise<Setup>): void {
  const test = (
    title: string,
    fn: (backend: KvBackend, s: Setup) => Promise<void>,
  ) =>
    Deno.test(`${name}: ${title}`, async () => {
      const s = await setup();
      const backend = await KvBackend.open(s.store);
      try {
        await fn(backend, s);
      } finally {
        await backend.close();
        await s.cleanup();
      }
    });

  test("upsert, get, update-missing and delete", async (backend) => {
    assert.equal(await backend.get("ns", "a"), null);
    assert.equal(await backend.put(entry("a", "one"), "upsert"), null);
    const replaced = await backend.put(
      entry("a", "two", { updated_at: T1 }),
      "upsert",
    );
    assert.equal(replaced?.value, "one");
    assert.equal((await backend.get("ns", "a"))?.value, "two");
    await assert.rejects(
      backend.put(entry("missing", "x"), "update"),
      (error) => error instanceof EntryNotFound && error.key === "missing",
    );
    assert.equal(await backend.get("ns", "missing"), null);
    const updated = await backend.put(entry("a", "three"), "update");
    assert.equal(updated?.value, "two");
    assert.equal(await backend.delete("ns", "a"), true);
    assert.equal(await backend.delete("ns", "a"), false);
    assert.equal(await backend.get("ns", "a"), null);
    assert.deepEqual(await backend.countByNamespace(), {});
    assert.deepEqual(await backend.search("ns", await searchQuery("three")), {
      lexical: [],
      vector: [],
    });
  });

  test("entries round-trip exactly, unicode and 200 KB values included", async (backend) => {
    const big = "ünïcødé 🧠 记忆 ".repeat(200 * 1024 / 20);
    const original = await embedded("ключ/🔑", big, {
      namespace: "名前空間",
      tags: ["тег", "标签"],
    });
    await backend.put(original, "upsert");
    const read = await backend.get("名前空間", "ключ/🔑");
    const { embedding, ...rest } = original;
    assert.deepEqual({ ...read, embedding: undefined }, {
      ...rest,
      embedding: undefined,
    });
    // The vector is stored int8-quantised: equal within half a step (max/254).
    assert.ok(read?.embedding?.vector instanceof Float32Array);
    assert.equal(read.embedding.embedder, embedding?.embedder);
    assertClose(read.embedding.vector, embedding?.vector);
    const { lexical } = await backend.search(
      "名前空間",
      await searchQuery("记忆"),
    );
    assert.deepEqual(lexical.map((h) => h.key), ["ключ/🔑"]);
  });

  test("list pages in key order and filters by tags", async (backend) => {
    for (let i = 0; i < 25; i++) {
      const tags = ["all", i % 2 === 0 ? "even" : "odd"];
      if (i % 3 === 0) tags.push("three");
      await backend.put(
        entry(`k${String(i).padStart(2, "0")}`, `v${i}`, { tags }),
        "upsert",
      );
    }
    await backend.put(
      entry("other", "x", { namespace: "ns2", tags: ["all"] }),
      "upsert",
    );
    const collect = async (tags: string[] | undefined, limit: number) => {
      const pages: string[][] = [];
      let cursor: string | null = null;
      do {
        const page = await backend.list("ns", { tags, limit, cursor });
        pages.push(page.entries.map((e) => e.key));
        cursor = page.cursor;
      } while (cursor !== null && pages.length < 100);
      return pages;
    };
    const all = await collect(undefined, 10);
    assert.deepEqual(all.map((p) => p.length), [10, 10, 5]);
    assert.deepEqual(all.flat(), [...all.flat()].sort());
    const evenThree = await collect(["three", "even"], 2);
    assert.deepEqual(evenThree.flat(), ["k00", "k06", "k12", "k18", "k24"]);
    assert.ok(evenThree.slice(0, -1).every((p) => p.length === 2));
    const odd = await collect(["odd", "all"], 4);
    assert.deepEqual(odd.flat().length, 12);
    assert.deepEqual(await collect(["nope"], 5), [[]]);
    // Retagging moves an entry out of a tag's listing.
    await backend.put(entry("k00", "v0", { tags: ["all"] }), "upsert");
    assert.deepEqual((await collect(["even", "three"], 10)).flat(), [
      "k06",
      "k12",
      "k18",
      "k24",
    ]);
    const page = await backend.list("ns", { tags: ["odd"], limit: 3 });
    assert.ok(page.cursor);
    await assert.rejects(
      backend.list("ns", { tags: ["even"], limit: 3, cursor: page.cursor }),
      /Invalid cursor/,
    );
    await assert.rejects(
      backend.list("ns", { limit: 3, cursor: "garbage" }),
      /Invalid cursor/,
    );
  });

  test("conversations keep order, count and honour the limit", async (backend) => {
    assert.equal(await backend.appendMessages("ns", "s1", [message("m0")]), 1);
    const many = Array.from(
      { length: 150 },
      (_, i) => message(`m${i + 1}`, i % 2 ? "assistant" : "user"),
    );
    assert.equal(await backend.appendMessages("ns", "s1", many), 151);
    assert.equal(await backend.appendMessages("ns", "s1", []), 151);
    await backend.appendMessages("ns", "s2", [{
      ...message("with extra"),
      extra: { name: "bob", tool_call_id: "call_1", nested: { n: [1, 2] } },
    }]);
    const last3 = await backend.history("ns", "s1", 3);
    assert.deepEqual(last3.map((m) => m.content), ["m148", "m149", "m150"]);
    const all = await backend.history("ns", "s1", 5000);
    assert.equal(all.length, 151);
    assert.deepEqual(
      all.map((m) => m.content),
      Array.from({ length: 151 }, (_, i) => `m${i}`),
    );
    assert.deepEqual(await backend.history("ns", "s2", 10), [{
      role: "user",
      content: "with extra",
      at: T0,
      extra: { name: "bob", tool_call_id: "call_1", nested: { n: [1, 2] } },
    }]);
    assert.deepEqual(await backend.history("ns", "none", 10), []);
    assert.deepEqual((await backend.sessions("ns")).sort(), ["s1", "s2"]);
    assert.deepEqual(await backend.sessions("other"), []);
  });

  test("concurrent appends and puts neither lose nor double-count", async (backend) => {
    const counts = await Promise.all(
      Array.from(
        { length: 10 },
        (_, i) => backend.appendMessages("ns", "s", [message(`m${i}`)]),
      ),
    );
    assert.deepEqual([...counts].sort((a, b) => a - b), [
      1,
      2,
      3,
      4,
      5,
      6,
      7,
      8,
      9,
      10,
    ]);
    assert.equal((await backend.history("ns", "s", 100)).length, 10);
    await Promise.all(
      Array.from(
        { length: 20 },
        (_, i) => backend.put(entry(`k${i % 7}`, `v${i}`), "upsert"),
      ),
    );
    assert.deepEqual(await backend.countByNamespace(), { ns: 7 });
  });

  test(
    "two backends on one store retry conflicting commits",
    async (backend, s) => {
      // Another process sharing the store: writes race on the namespace counter.
      const other = await KvBackend.open(scoped(s.store, []));
      await Promise.all(
        Array.from(
          { length: 20 },
          (_, i) =>
            (i % 2 ? backend : other).put(entry(`k${i}`, "v"), "upsert"),
        ),
      );
      await Promise.all([
        backend.appendMessages("ns", "s", [message("a"), message("b")]),
        other.appendMessages("ns", "s", [message("c")]),
      ]);
      assert.deepEqual(await backend.countByNamespace(), { ns: 20 });
      assert.equal((await other.history("ns", "s", 10)).length, 3);
      // Entries the other backend wrote after this one opened are listed by tag.
      await other.put(entry("late", "v", { tags: ["x", "y"] }), "upsert");
      await other.put(
        entry("late2", "v", { namespace: "fresh", tags: ["x"] }),
        "upsert",
      );
      for (const tags of [["x"], ["x", "y"]]) {
        const page = await backend.list("ns", { tags, limit: 10 });
        assert.deepEqual(page.entries.map((e) => e.key), ["late"]);
      }
      const fresh = await backend.list("fresh", { tags: ["x"], limit: 10 });
      assert.deepEqual(fresh.entries.map((e) => e.key), ["late2"]);
    },
  );

  test("countByNamespace counts entries per namespace", async (backend) => {
    for (const [ns, n] of [["a", 3], ["b", 1], ["c", 2]] as const) {
      for (let i = 0; i < n; i++) {
        await backend.put(entry(`k${i}`, "v", { namespace: ns }), "upsert");
      }
    }
    await backend.put(entry("k0", "again", { namespace: "a" }), "upsert");
    await backend.delete("c", "k0");
    await backend.delete("c", "k1");
    assert.deepEqual(await backend.countByNamespace(), { a: 3, b: 1 });
  });

  test("search ranks lexically and by vector within a namespace", async (backend) => {
    await backend.put(
      await embedded("lang", "My favourite programming language is Rust"),
      "upsert",
    );
    await backend.put(
      await embedded("food", "I like pizza with olives"),
      "upsert",
    );
    await backend.put(
      await embedded("pets", "The cat sleeps on the keyboard"),
      "upsert",
    );
    await backend.put(
      await embedded("elsewhere", "programming language", { namespace: "ns2" }),
      "upsert",
    );
    const rankings = await backend.search(
      "ns",
      await searchQuery("programming languages"),
    );
    assert.deepEqual(rankings.lexical.map((h) => h.key), ["lang"]);
    assert.equal(rankings.vector[0]?.key, "lang");
    assert.ok(!rankings.vector.some((h) => h.key === "elsewhere"));
    const other = await backend.search("ns", {
      ...(await searchQuery("pizza")),
      embedder: "openai:other",
    });
    assert.deepEqual(other.lexical.map((h) => h.key), ["food"]);
    assert.deepEqual(other.vector, []);
    assert.deepEqual(
      await backend.search("empty", await searchQuery("pizza")),
      {
        lexical: [],
        vector: [],
      },
    );
  });

  test("sensitive entries are found by key and tags, never by value", async (backend) => {
    const vector = (await builtin.embed(["secret"]))[0];
    await backend.put(
      entry("bank.pin", "enc:v1:aXY=:Y2lwaGVydGV4dA==", {
        sensitive: true,
        tags: ["finance"],
        embedding: { embedder: builtin.id, vector },
      }),
      "upsert",
    );
    const byValue = await backend.search(
      "ns",
      await searchQuery("ciphertext enc v1 aXY"),
    );
    assert.deepEqual(byValue, { lexical: [], vector: [] });
    const byKey = await backend.search("ns", await searchQuery("bank pin"));
    assert.deepEqual(byKey.lexical.map((h) => h.key), ["bank.pin"]);
    const byTag = await backend.search("ns", await searchQuery("finance"));
    assert.deepEqual(byTag.lexical.map((h) => h.key), ["bank.pin"]);
    assert.deepEqual(byTag.vector, []);
    assert.equal((await backend.get("ns", "bank.pin"))?.embedding, null);
    assert.deepEqual(await backend.staleEmbeddings(builtin.id, 10), []);
  });

  test("staleEmbeddings and setEmbedding skip entries that changed", async (backend) => {
    await backend.put(entry("plain", "needs a vector"), "upsert");
    await backend.put(await embedded("done", "has one"), "upsert");
    await backend.put(
      entry("old", "other embedder", {
        embedding: { embedder: "ollama:x", vector: Float32Array.from([1, 0]) },
        namespace: "ns2",
      }),
      "upsert",
    );
    const stale = await backend.staleEmbeddings(builtin.id, 10);
    assert.deepEqual(stale.map((e) => e.key).sort(), ["old", "plain"]);
    assert.equal((await backend.staleEmbeddings(builtin.id, 1)).length, 1);

    const [vector] = await builtin.embed(["needs a vector"]);
    // The entry was rewritten after the caller read it: the vector is for old text.
    await backend.put(
      entry("plain", "changed text", { updated_at: T1 }),
      "upsert",
    );
    await backend.setEmbedding("ns", "plain", T0, {
      embedder: builtin.id,
      vector,
    });
    assert.equal((await backend.get("ns", "plain"))?.embedding, null);
    await backend.setEmbedding("ns", "gone", T0, {
      embedder: builtin.id,
      vector,
    });
    assert.equal(await backend.get("ns", "gone"), null);

    const [fresh] = await builtin.embed(["changed text"]);
    await backend.setEmbedding("ns", "plain", T1, {
      embedder: builtin.id,
      vector: fresh,
    });
    assertClose((await backend.get("ns", "plain"))?.embedding?.vector, fresh);
    assert.deepEqual(
      (await backend.staleEmbeddings(builtin.id, 10)).map((e) => e.key),
      ["old"],
    );
    const found = await backend.search("ns", await searchQuery("changed text"));
    assert.equal(found.vector[0]?.key, "plain");
  });

  test("the index is rebuilt on open", async (backend, s) => {
    await backend.put(
      await embedded("lang", "programming languages", { tags: ["t"] }),
      "upsert",
    );
    await backend.put(
      await embedded("food", "pizza and pasta", { namespace: "ns2" }),
      "upsert",
    );
    await backend.put(entry("gone", "deleted entry"), "upsert");
    await backend.delete("ns", "gone");
    if (!s.reopen) {
      // MemoryStore: reopen over the same store through a second backend.
      const second = await KvBackend.open(s.store);
      const { lexical } = await second.search(
        "ns",
        await searchQuery("programming"),
      );
      assert.deepEqual(lexical.map((h) => h.key), ["lang"]);
      return;
    }
    await backend.close();
    const reopened = await KvBackend.open(await s.reopen());
    try {
      const rankings = await reopened.search(
        "ns",
        await searchQuery("programming language"),
      );
      assert.deepEqual(rankings.lexical.map((h) => h.key), ["lang"]);
      assert.deepEqual(rankings.vector.map((h) => h.key), ["lang"]);
      const pizza = await reopened.search("ns2", await searchQuery("pizza"));
      assert.deepEqual(pizza.lexical.map((h) => h.key), ["food"]);
      assert.deepEqual(
        (await reopened.search("ns", await searchQuery("deleted"))).lexical,
        [],
      );
      assert.deepEqual(await reopened.countByNamespace(), { ns: 1, ns2: 1 });
      const tagged = await reopened.list("ns", { tags: ["t"], limit: 10 });
      assert.deepEqual(tagged.entries.map((e) => e.key), ["lang"]);
      assert.equal((await reopened.health()).status, "ok");
    } finally {
      await reopened.close();
    }
  });
}

contract("MemoryStore", memorySetup);
contract("KvStore", kvSetup);

Deno.test("each vector is stored once: binary records without it, the journal then the snapshot with it", async () => {
  const store = new MemoryStore();
  // Views: closing a backend closes its view only.
  const backend = await KvBackend.open(scoped(store, ["m"]));
  try {
    const original = await embedded("k", "some text", { tags: ["a", "b"] });
    await backend.put(original, "upsert");
    const record = await store.get(["m", "e", "ns", "k"]);
    // Binary: flags, two times as float64, two tags, the text; no vector.
    assert.equal(record?.value, null);
    assert.equal(record?.bytes?.length, 2 + 16 + 1 + 4 + "some text".length);
    const journal = await store.get(["m", "j", "ns", "k"]);
    const written = journal?.bytes && decodeJournal(journal.bytes);
    assert.ok(written && written.embedding?.embedder === builtin.id);
    assert.equal(written.embedding.vector.length, 256);
    // Within half a quantisation step of the original, component by component.
    const vector = original.embedding?.vector;
    assert.ok(vector);
    let max = 0;
    for (const v of vector) max = Math.max(max, Math.abs(v));
    for (
      const read of [
        written.embedding,
        (await backend.get("ns", "k"))?.embedding,
      ]
    ) {
      const back = read?.vector;
      assert.ok(back && back.length === vector.length);
      for (let i = 0; i < vector.length; i++) {
        assert.ok(Math.abs(back[i] - vector[i]) <= max / 254 + 1e-7);
      }
    }
    // Once a snapshot holds the vector, its journal row goes; reads still get it.
    const before = (await backend.get("ns", "k"))?.embedding;
    assert.equal(await backend.saveIndex("ns"), true);
    assert.equal(await store.get(["m", "j", "ns", "k"]), null);
    await backend.close();
    const reopened = await KvBackend.open(scoped(store, ["m"]));
    try {
      assert.deepEqual((await reopened.get("ns", "k"))?.embedding, before);
    } finally {
      await reopened.close();
    }
  } finally {
    await backend.close();
  }
});

Deno.test("records written with base64 Float32 vectors are still read and searched", async () => {
  const store = new MemoryStore();
  const [vector] = await builtin.embed(["violet harbour lantern"]);
  await store.set(["e", "ns", "old"], {
    value: "violet harbour lantern",
    tags: [],
    sensitive: false,
    created_at: T0,
    updated_at: T0,
    embedding: {
      embedder: builtin.id,
      f32: btoa(String.fromCharCode(...new Uint8Array(vector.buffer))),
    },
  });
  await store.set(["n", "ns"], 1);
  const backend = await KvBackend.open(store);
  try {
    const entry = await backend.get("ns", "old");
    assert.deepEqual(entry?.embedding?.vector, vector);
    const found = await backend.search("ns", await searchQuery("lantern"));
    assert.equal(found.vector[0]?.key, "old");
    assert.equal(found.lexical[0]?.key, "old");
  } finally {
    await backend.close();
  }
});

Deno.test("an unreadable record is skipped at open, reported on get, and replaceable", async () => {
  const store = new MemoryStore();
  await store.set(["e", "ns", "bad"], { value: 42 });
  const logs: string[] = [];
  const backend = await KvBackend.open(store, {
    logger: createLogger({ sink: (line) => logs.push(line) }),
  });
  try {
    assert.ok(
      logs.some((l) =>
        l.includes("memory_entry_unreadable") && l.includes('"entry":"bad"')
      ),
    );
    await assert.rejects(
      backend.get("ns", "bad"),
      /Stored entry "bad" in namespace "ns" is unreadable/,
    );
    // It can still be replaced or deleted.
    assert.equal(await backend.put(entry("bad", "fixed"), "update"), null);
    assert.equal((await backend.get("ns", "bad"))?.value, "fixed");
    assert.equal(await backend.delete("ns", "bad"), true);
  } finally {
    await backend.close();
  }
});

Deno.test("records: the entry a write indexes is the entry its record and journal row read back as", async () => {
  const [vector] = await new BuiltinEmbedder().embed(["amber lantern harbour"]);
  const base = {
    namespace: "ns",
    key: "k",
    value: "amber lantern harbour ünïcødé 🧠",
    tags: ["a", "b"],
    sensitive: false,
    created_at: "2026-01-01T00:00:00.000Z",
    updated_at: "2026-01-02T00:00:00.000Z",
  };
  for (
    const embedding of [
      { embedder: "builtin", vector },
      { embedder: "x", vector: new Float32Array([0, -1e-3, 2.5, -7, 1e30]) },
      { embedder: "zero", vector: new Float32Array(4) },
      null,
    ]
  ) {
    const { record, stored } = encodeStored({ ...base, embedding });
    assert.deepEqual(record, encodeEntry({ ...base, embedding }));
    assert.deepEqual(decodeEntry("ns", "k", record), {
      ...stored,
      embedding: null,
    });
    assert.deepEqual(
      decodeJournal(encodeJournal("w.1", stored.embedding)),
      { id: "w.1", embedding: stored.embedding },
    );
    const index = new SearchIndex();
    index.upsert("k", base.value, stored.embedding);
    assert.deepEqual(index.embedding("k"), stored.embedding);
  }
  // Times that Date does not give back exactly are kept as text.
  for (const created_at of ["2026-01-01T00:00:00Z", "yesterday", ""]) {
    const { record } = encodeStored({ ...base, created_at, embedding: null });
    assert.equal(decodeEntry("ns", "k", record).created_at, created_at);
  }
  assert.throws(
    () => decodeEntry("ns", "k", new Uint8Array([0x45, 0, 9])),
    /Stored entry "k" in namespace "ns" is unreadable/,
  );
});

Deno.test("records: values of any script and length read back exactly; a journal row's id reads alone", () => {
  const pieces = ["a", "é", "ü ", "\u4e2d", "🧠", "\u0000", " ", "\n"];
  for (let n = 0; n < 600; n += 7) {
    // n characters mixing one-, two-, three- and four-byte UTF-8, ending anywhere.
    let value = "";
    for (let i = 0; value.length < n; i++) value += pieces[(i * n) % 8];
    for (const prefix of ["", "x".repeat(300)]) {
      const entry = {
        namespace: "ns",
        key: "k",
        value: prefix + value,
        tags: n % 2 ? ["tag", "ünï"] : [],
        sensitive: false,
        created_at: T0,
        updated_at: T1,
        embedding: null,
      };
      assert.deepEqual(decodeEntry("ns", "k", encodeEntry(entry)), entry);
    }
  }
  const vector = new Float32Array([0.5, -1, 0.25]);
  assert.equal(
    journalId(encodeJournal("p.1z", { embedder: "e", vector })),
    "p.1z",
  );
  assert.equal(journalId(encodeJournal("p.2", null)), "p.2");
  assert.equal(journalId(new Uint8Array([0x45, 1])), null);
});

/** A view of `inner` whose reads of index snapshot parts fail, as a store going away would. */
class FailingParts implements Store {
  readonly kind = "failing";
  constructor(readonly inner: Store) {}
  get: Store["get"] = (key) => this.inner.get(key);
  getMany: Store["getMany"] = (keys) =>
    keys.some((key) => key[0] === "y")
      ? Promise.reject(new Error("connection lost"))
      : this.inner.getMany(keys);
  set: Store["set"] = (key, value) => this.inner.set(key, value);
  delete: Store["delete"] = (key) => this.inner.delete(key);
  list: Store["list"] = (prefix, options) => this.inner.list(prefix, options);
  commit: Store["commit"] = (op) => this.inner.commit(op);
  flush: Store["flush"] = () => this.inner.flush();
  close: Store["close"] = () => this.inner.close();
}

Deno.test("a store failing while the snapshot is read fails the open: no rebuild replaces the vectors' only copy", async () => {
  const store = new MemoryStore();
  const first = await KvBackend.open(scoped(store, ["m"]));
  await first.put(await embedded("k", "some text"), "upsert");
  await first.close(); // saves the first snapshot, the vector's only copy
  const head = await store.get(["m", "x", "ns"]);
  assert.ok(head);
  await assert.rejects(
    KvBackend.open(new FailingParts(scoped(store, ["m"]))),
    /connection lost/,
  );
  assert.deepEqual(await store.get(["m", "x", "ns"]), head);
  const again = await KvBackend.open(scoped(store, ["m"]));
  try {
    assert.equal((await again.get("ns", "k"))?.embedding?.vector.length, 256);
  } finally {
    await again.close();
  }
});

Deno.test("a search reads its hits in one Store read, through the daemon's deferred backend too", async () => {
  const inner = new MemoryStore();
  const reads = { get: 0, getMany: 0 };
  const store = new Proxy(inner, {
    get(target, property) {
      if (property === "get" || property === "getMany") reads[property]++;
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const backend = new DeferredBackend("local", KvBackend.open(store));
  const memory = new MemoryService({
    backend,
    embedder: new BuiltinEmbedder(),
    dataKey: await crypto.subtle.generateKey(
      { name: "AES-GCM", length: 256 },
      false,
      ["encrypt", "decrypt"],
    ),
    log: createLogger({ level: "error" }),
  });
  try {
    for (let i = 0; i < 12; i++) {
      await memory.store({}, {
        namespace: "ns",
        key: `k${i}`,
        value: `river note ${i}`,
        tags: [],
      });
    }
    await memory.store({}, {
      namespace: "ns",
      key: "secret",
      value: "river secret",
      tags: ["sensitive"],
    });
    await memory.delete({}, "ns", "k3");
    reads.get = reads.getMany = 0;
    const found = await memory.search({}, "ns", "river", 8);
    assert.equal(found.hits.length, 8);
    assert.deepEqual({ ...reads }, { get: 0, getMany: 1 });
    for (const hit of found.hits) {
      assert.equal(
        hit.value,
        hit.key === "secret"
          ? "river secret"
          : `river note ${hit.key.slice(1)}`,
      );
    }
    assert.ok(!found.hits.some((hit) => hit.key === "k3"));
  } finally {
    await memory.stop();
    await backend.close();
  }
});
