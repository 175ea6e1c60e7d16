// import_memories and the group commit under it: many entries in one call,
// written in batches that share commits, progress after each batch; a failed
// commit reaches only the writes of its batch; progress reported is durable
// (kill -9 in the middle of an import loses none of the entries it counted).

import assert from "node:assert/strict";
import { join } from "node:path";
import type { Mutation, Store } from "../../../platform/store/mod.ts";
import { openKvStore } from "../../../platform/store/kv.ts";
import { createLogger } from "../../../platform/log.ts";
import { KvBackend } from "../../../tools/memory/backends/kv.ts";
import { BuiltinEmbedder } from "../../../tools/memory/embedder_builtin.ts";
import type { StoredEntry } from "../../../tools/memory/model.ts";
import { MemoryService } from "../../../tools/memory/service.ts";
import { IMPORT_BATCH } from "../../../tools/memory/service_writes.ts";
import { spawnServe, tempDir } from "../../helpers.ts";
import { call, connectMemory } from "./scenario.ts";

const T0 = "2026-01-01T00:00:00.000Z";

/** Whether a mutation writes a row of an entry whose key starts with `prefix`. */
function touches(m: Mutation, prefix: string): boolean {
  return m.key.some((part) =>
    typeof part === "string" && part.startsWith(prefix)
  );
}

/** `store` with its commit replaced; every other member is the store's own. */
function withCommit(store: Store, commit: Store["commit"]): Store {
  return new Proxy(store, {
    get(target, property) {
      if (property === "commit") return commit;
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

function entry(key: string, value: string): StoredEntry {
  return {
    namespace: "ns",
    key,
    value,
    tags: [],
    sensitive: false,
    created_at: T0,
    updated_at: T0,
    embedding: null,
  };
}

Deno.test("group commit: a failed commit fails the writes of its batch only; the batch queued behind it lands", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "store.kv");
  const store = await openKvStore(path);
  let held: () => void = () => {};
  let heldSeen: () => void = () => {};
  const seen = new Promise<void>((resolve) => heldSeen = resolve);
  const release = new Promise<void>((resolve) => held = resolve);
  const failing = withCommit(store, async (op) => {
    // Every commit holding a write of batch A fails (a disk that refuses
    // them); the first one waits until batch B is queued behind it.
    if (op.mutations.some((m) => touches(m, "a-"))) {
      heldSeen();
      await release;
      throw new Error("disk refused the commit");
    }
    return await store.commit(op);
  });
  const backend = await KvBackend.open(failing);
  const a = Array.from(
    { length: 10 },
    (_, i) => backend.put(entry(`a-${i}`, `a ${i}`), "upsert"),
  );
  await seen;
  const b = Array.from(
    { length: 10 },
    (_, i) => backend.put(entry(`b-${i}`, `b ${i}`), "upsert"),
  );
  held();
  const aOut = await Promise.allSettled(a);
  const bOut = await Promise.allSettled(b);
  for (const out of aOut) {
    assert.equal(out.status, "rejected");
    assert.match(String(out.reason), /disk refused the commit/);
  }
  assert.deepEqual(bOut.map((o) => o.status), Array(10).fill("fulfilled"));
  await backend.close();
  await store.close();

  // What was answered is on disk; what failed is not.
  const reopened = await KvBackend.open(await openKvStore(path));
  try {
    assert.deepEqual(await reopened.countByNamespace(), { ns: 10 });
    for (let i = 0; i < 10; i++) {
      assert.equal((await reopened.get("ns", `b-${i}`))?.value, `b ${i}`);
      assert.equal(await reopened.get("ns", `a-${i}`), null);
    }
  } finally {
    await reopened.close();
  }
});

Deno.test("importEntries: writes in flight share commits, progress every batch of answers, a refused entry fails alone, a repeated key ends with its later value", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "store.kv");
  const store = await openKvStore(path);
  let commits = 0;
  const refusing = withCommit(store, async (op) => {
    commits++;
    if (op.mutations.some((m) => touches(m, "bad-"))) {
      throw new Error("refused");
    }
    return await store.commit(op);
  });
  const backend = await KvBackend.open(refusing);
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
  const entries: { key: string; value: string; tags?: string[] }[] = Array
    .from({ length: 1000 }, (_, i) => ({
      key: `k${i}`,
      value: `note ${i} about the garden and the river`,
      ...(i % 3 === 0 ? { tags: [`t${i % 2}`] } : {}),
    }));
  entries.splice(10, 0, { key: "bad-1", value: "refused" });
  // The same key twice among the writes in flight: written in order.
  entries.splice(20, 0, { key: "k5", value: "the later value of k5" });
  entries.splice(600, 0, { key: "bad-2", value: "refused" });
  const done: number[] = [];
  const outcome = await memory.importEntries(
    {},
    "ns",
    entries,
    { progress: (n) => void done.push(n) },
  );
  try {
    assert.equal(outcome.done, 1003);
    assert.equal(outcome.stored, 1001);
    assert.equal(outcome.replaced, 1);
    assert.deepEqual(outcome.failed.map((f) => f.key), ["bad-1", "bad-2"]);
    // Progress every IMPORT_BATCH entries answered from the first on, then the end.
    assert.ok(done.length >= 1003 / IMPORT_BATCH - 1, `${done}`);
    for (const [i, n] of done.entries()) {
      const step = n - (done[i - 1] ?? 0);
      assert.ok(step >= IMPORT_BATCH || n === 1003, `${done}`);
    }
    assert.equal(done.at(-1), 1003);
    assert.ok(commits < 1003 / 4, `1,003 writes took ${commits} commits`);
  } finally {
    await memory.stop();
    await backend.close();
    await store.close();
  }
  const reopened = await KvBackend.open(await openKvStore(path));
  try {
    assert.deepEqual(await reopened.countByNamespace(), { ns: 1000 });
    assert.equal(
      (await reopened.get("ns", "k5"))?.value,
      "the later value of k5",
    );
    assert.deepEqual((await reopened.get("ns", "k3"))?.tags, ["t1"]);
    assert.equal(await reopened.get("ns", "bad-1"), null);
    // i ≡ 3 (mod 6) carries t1: 167 of the 1,000.
    const t1 = await reopened.list("ns", { tags: ["t1"], limit: 1000 });
    assert.equal(t1.entries.length, 167);
  } finally {
    await reopened.close();
  }
});

Deno.test("import_memories over MCP: progress as entries are answered; kill -9 mid-import keeps every entry progress counted", async () => {
  await using dir = await tempDir();
  const first = await spawnServe(dir.path);
  const client = await connectMemory(first);
  // A whole import, with progress.
  const small = Array.from({ length: 250 }, (_, i) => ({
    key: `s${i}`,
    value: `small ${i}`,
  }));
  const reports: { progress: number; total?: number }[] = [];
  const result = await client.client.callTool(
    {
      name: "import_memories",
      arguments: { namespace: "small", entries: small },
    },
    undefined,
    { onprogress: (p) => void reports.push(p) },
  );
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  assert.deepEqual(
    {
      ...(result.structuredContent as Record<string, unknown>),
      message: undefined,
    },
    {
      namespace: "small",
      stored: 250,
      replaced: 0,
      failed: 0,
      errors: [],
      message: undefined,
    },
  );
  assert.ok(reports.length >= 2, JSON.stringify(reports));
  for (const [i, report] of reports.entries()) {
    assert.equal(report.total, 250);
    assert.ok(report.progress > (reports[i - 1]?.progress ?? 0));
  }
  assert.equal(reports.at(-1)?.progress, 250);

  // A large import, killed once some batches are reported.
  const big = Array.from({ length: 6000 }, (_, i) => ({
    key: `b${i}`,
    value: `big entry ${i} of the import`,
    tags: [`g${i % 4}`],
  }));
  let counted = 0;
  let killing: Promise<unknown> | undefined;
  const running = client.client.callTool(
    { name: "import_memories", arguments: { namespace: "big", entries: big } },
    undefined,
    {
      timeout: 120_000,
      onprogress: (p) => {
        if (killing) return;
        counted = p.progress;
        if (counted >= 500) killing = first.stop("SIGKILL");
      },
    },
  ).then(() => "answered", () => "broken");
  while (!killing) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.equal(((await killing) as { signal: string }).signal, "SIGKILL");
  await client.client.close().catch(() => {});
  assert.equal(await running, "broken", "the import was cut short");
  assert.ok(counted < big.length);

  const second = await spawnServe(dir.path);
  const reader = await connectMemory(second);
  try {
    const keys = new Set<string>();
    let cursor: unknown;
    do {
      const page = await call(reader.client, "list_memories", {
        namespace: "big",
        limit: 200,
        ...(typeof cursor === "string" ? { cursor } : {}),
      });
      for (const e of page.entries as { key: string; value: string }[]) {
        keys.add(e.key);
      }
      cursor = page.next_cursor;
    } while (typeof cursor === "string");
    for (let i = 0; i < counted; i++) {
      assert.ok(keys.has(`b${i}`), `b${i} was counted but is gone`);
    }
    const back = await call(reader.client, "retrieve_memory", {
      namespace: "big",
      key: `b${counted - 1}`,
    });
    assert.equal(back.value, `big entry ${counted - 1} of the import`);
    assert.deepEqual(back.tags, [`g${(counted - 1) % 4}`]);
  } finally {
    await reader.close();
    assert.equal((await second.stop()).code, 0);
  }
});
