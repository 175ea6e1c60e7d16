// HostedBackend over a real PostgreSQL that the tests stop and start, with a
// KvBackend cache and the write queue in a KV file, as the daemon runs it.

import assert from "node:assert/strict";
import { join } from "node:path";
import { createLogger, type Logger } from "../../../platform/log.ts";
import { scoped } from "../../../platform/store/mod.ts";
import { type KvStore, openKvStore } from "../../../platform/store/kv.ts";
import { EntryNotFound } from "../../../tools/memory/backends/port.ts";
import {
  HostedBackend,
  type RemoteConnector,
} from "../../../tools/memory/backends/hosted.ts";
import { KvBackend } from "../../../tools/memory/backends/kv.ts";
import { PgBackend } from "../../../tools/memory/backends/pg.ts";
import type { Message, StoredEntry } from "../../../tools/memory/model.ts";
import { tokenize } from "../../../tools/memory/search_index.ts";
import { type PgServer, pgTestIgnore, startPgServer } from "../../pg_server.ts";

const ignore = pgTestIgnore();

interface LogLine {
  event: string;
  [field: string]: unknown;
}

function entry(
  key: string,
  value: string,
  updatedAt = "2025-01-01T00:00:00.000Z",
): StoredEntry {
  return {
    namespace: "ns",
    key,
    value,
    tags: ["t"],
    sensitive: false,
    created_at: "2025-01-01T00:00:00.000Z",
    updated_at: updatedAt,
    embedding: null,
  };
}

function message(i: number): Message {
  const at = new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString();
  return { role: "user", content: `m${i}`, at };
}

/** One daemon's memory: a HostedBackend with its KV file in `dir`. */
interface Daemon {
  hosted: HostedBackend;
  kv: KvStore;
  close(): Promise<void>;
}

class Harness {
  readonly logs: LogLine[] = [];
  readonly log: Logger;
  /** Everything opened, closed by cleanup() even when an assertion failed. */
  readonly #open: { close(): Promise<void> }[] = [];
  constructor(readonly server: PgServer, readonly url: string) {
    this.log = createLogger({
      sink: (line) => this.logs.push(JSON.parse(line)),
    });
  }

  events(name: string): LogLine[] {
    return this.logs.filter((l) => l.event === name);
  }

  /** The remote as a connector, so a daemon can start while PostgreSQL is down. */
  connector(): RemoteConnector {
    return {
      kind: "postgres",
      connect: () =>
        PgBackend.connect({
          url: this.url,
          key: this.server.password,
          log: this.log,
          connectTimeoutMs: 2000,
          statementTimeoutMs: 2000,
        }),
    };
  }

  async daemon(dir: string): Promise<Daemon> {
    const kv = await openKvStore(join(dir, "memory.kv"));
    const cache = await KvBackend.open(scoped(kv, ["cache"]));
    const hosted = await HostedBackend.open({
      remote: this.connector(),
      cache,
      store: scoped(kv, ["hosted"]),
      log: this.log,
      probeIntervalMs: 50,
      maxProbeIntervalMs: 200,
    });
    let closed = false;
    const daemon = {
      hosted,
      kv,
      close: async () => {
        if (closed) return;
        closed = true;
        await hosted.close();
        await kv.close();
      },
    };
    this.#open.push(daemon);
    return daemon;
  }

  /** Another daemon writing straight to PostgreSQL. */
  async direct(): Promise<PgBackend> {
    const pg = await PgBackend.connect({
      url: this.url,
      key: this.server.password,
      log: this.log,
    });
    this.#open.push(pg);
    return pg;
  }

  async cleanup(): Promise<void> {
    for (const item of this.#open.splice(0)) await item.close();
  }
}

async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const DEGRADED =
  /^PostgreSQL unreachable since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z; (\d+) writes queued$/;

Deno.test({
  name: "HostedBackend over PostgreSQL with outages",
  ignore,
  async fn(t) {
    const server = await startPgServer();
    const dir = await Deno.makeTempDir({ prefix: "hosted_test_" });
    let dbs = 0;
    const harness = async () =>
      new Harness(server, await server.createDatabase(`h${++dbs}`));
    try {
      await t.step(
        "healthy: write-through, reads from PostgreSQL",
        async () => {
          const h = await harness();
          const d = await h.daemon(join(dir, "healthy"));
          const direct = await h.direct();
          try {
            assert.equal(d.hosted.kind, "hosted(postgres)");
            assert.equal((await d.hosted.health()).status, "ok");
            await d.hosted.put(entry("a", "1"), "upsert");
            assert.equal((await direct.get("ns", "a"))?.value, "1");
            await direct.put(entry("b", "from elsewhere"), "upsert");
            assert.equal(
              (await d.hosted.get("ns", "b"))?.value,
              "from elsewhere",
            );
            await assert.rejects(
              d.hosted.put(entry("nope", "x"), "update"),
              EntryNotFound,
            );
            assert.equal(
              await d.hosted.appendMessages("ns", "s", [message(1)]),
              1,
            );
            assert.deepEqual(await d.hosted.sessions("ns"), ["s"]);
            assert.deepEqual(await d.hosted.countByNamespace(), { ns: 2 });
          } finally {
            await h.cleanup();
          }
          // The cache got both: the write and the read.
          const kv = await openKvStore(join(dir, "healthy", "memory.kv"));
          const cache = await KvBackend.open(scoped(kv, ["cache"]));
          try {
            assert.equal((await cache.get("ns", "a"))?.value, "1");
            assert.equal((await cache.get("ns", "b"))?.value, "from elsewhere");
          } finally {
            await cache.close();
            await kv.close();
          }
          assert.equal(h.events("memory_hosted_unreachable").length, 0);
        },
      );

      await t.step("outage, restart while degraded, recovery", async () => {
        const h = await harness();
        try {
          await outageScenario(h, join(dir, "outage"));
        } finally {
          await h.cleanup();
        }
      });

      await t.step(
        "the probe loop drains by itself; a poison write is set aside",
        async () => {
          const h = await harness();
          const d = await h.daemon(join(dir, "poison"));
          const direct = await h.direct();
          try {
            await d.hosted.put(entry("a", "1"), "upsert");
            await server.stop();
            try {
              await d.hosted.put(entry("b", "2"), "upsert");
              // The cache takes a NUL character; PostgreSQL text cannot.
              await d.hosted.put(entry("poison", "a\u0000b"), "upsert");
              await d.hosted.put(entry("c", "3"), "upsert");
              assert.equal((await d.hosted.health()).queued_writes, 3);
            } finally {
              await server.start();
            }
            await waitFor(
              "recovery",
              () => h.events("memory_hosted_recovered").length === 1,
            );
            const health = await d.hosted.health();
            assert.equal(health.status, "ok");
            assert.match(
              health.detail ?? "",
              /1 writes rejected by PostgreSQL/,
            );
            const rejected = h.events("memory_hosted_write_rejected");
            assert.equal(rejected.length, 1);
            assert.equal(rejected[0].entry, "poison");
            assert.match(String(rejected[0].error), /NUL character/);
            assert.equal((await direct.get("ns", "b"))?.value, "2");
            assert.equal((await direct.get("ns", "c"))?.value, "3");
            assert.equal(await direct.get("ns", "poison"), null);
            const dead = await scoped(d.kv, ["hosted"]).list(["dead"]);
            assert.equal(dead.entries.length, 1);
            // Healthy again: writes go straight to PostgreSQL.
            await d.hosted.put(entry("d", "4"), "upsert");
            assert.equal((await direct.get("ns", "d"))?.value, "4");
          } finally {
            await h.cleanup();
          }
        },
      );
    } finally {
      await server.destroy();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

/**
 * PostgreSQL stops: reads come from the cache, writes are queued, one alert.
 * The daemon restarts while degraded: the queue is still there. Meanwhile
 * another daemon writes a newer version of a queued entry, and one queued
 * append had in fact reached the server. PostgreSQL starts: the queue
 * drains with nothing lost or doubled, and the newer remote write kept.
 */
async function outageScenario(h: Harness, path: string): Promise<void> {
  const server = h.server;
  let d = await h.daemon(path);
  await d.hosted.put(entry("keep", "v1"), "upsert");
  await d.hosted.put(entry("gone", "v1"), "upsert");
  await d.hosted.put(entry("race", "old"), "upsert");
  await server.stop();
  try {
    // Reads come from the cache.
    assert.equal((await d.hosted.get("ns", "keep"))?.value, "v1");
    // Writes go to the cache and the queue.
    await d.hosted.put(
      entry("keep", "v2", "2025-02-01T00:00:00.000Z"),
      "update",
    );
    await d.hosted.put(entry("new", "created offline"), "upsert");
    assert.equal(await d.hosted.delete("ns", "gone"), true);
    // Order matters: replayed the other way round, "temp" would survive.
    await d.hosted.put(entry("temp", "short-lived"), "upsert");
    assert.equal(await d.hosted.delete("ns", "temp"), true);
    assert.equal(
      await d.hosted.appendMessages("ns", "s", [message(1), message(2)]),
      2,
    );
    await d.hosted.setEmbedding("ns", "new", "2025-01-01T00:00:00.000Z", {
      embedder: "e1",
      vector: Float32Array.from([1, 0]),
    });
    await d.hosted.put(
      entry("race", "older offline write", "2025-03-01T00:00:00.000Z"),
      "upsert",
    );
    await assert.rejects(
      d.hosted.put(entry("never-cached", "x"), "update"),
      EntryNotFound,
    );
    assert.equal(await d.hosted.get("ns", "gone"), null);
    const hits = await d.hosted.search("ns", {
      text: "offline",
      terms: tokenize("offline"),
      limit: 5,
    });
    assert.ok(hits.lexical.some((hit) => hit.key === "new"));
    const health = await d.hosted.health();
    assert.equal(health.status, "degraded");
    assert.match(health.detail ?? "", DEGRADED);
    assert.equal(health.queued_writes, 8);
    assert.equal(health.detail?.match(DEGRADED)?.[1], "8");
    assert.equal(h.events("memory_hosted_unreachable").length, 1);

    // A restart while degraded: the queue is still there.
    await d.close();
    d = await h.daemon(path);
    const again = await d.hosted.health();
    assert.equal(again.status, "degraded");
    assert.equal(again.queued_writes, 8);
    assert.equal(h.events("memory_hosted_pending").length, 1);
    assert.equal((await d.hosted.get("ns", "keep"))?.value, "v2");
    await d.close();
  } finally {
    await server.start();
  }
  // While it was down, another daemon wrote a newer "race", and one
  // queued append had in fact reached the server (a lost reply).
  const direct = await h.direct();
  try {
    await direct.put(
      entry("race", "newer remote write", "2025-04-01T00:00:00.000Z"),
      "upsert",
    );
    await direct.appendMessages("ns", "s", [message(1), message(2)]);

    d = await h.daemon(path);
    await waitFor(
      "the queue to drain",
      async () => (await d.hosted.health()).status === "ok",
    );
    const health = await d.hosted.health();
    assert.equal(health.queued_writes, 0);
    const recovered = h.events("memory_hosted_recovered");
    assert.equal(recovered.length, 1);
    assert.equal(recovered[0].synced_writes, 7);
    assert.equal(recovered[0].superseded_writes, 1);
    assert.equal(h.events("memory_hosted_unreachable").length, 1);

    // Nothing lost, nothing doubled, the newer remote write kept.
    assert.equal((await direct.get("ns", "keep"))?.value, "v2");
    assert.equal(
      (await direct.get("ns", "new"))?.value,
      "created offline",
    );
    assert.equal(
      (await direct.get("ns", "new"))?.embedding?.embedder,
      "e1",
    );
    assert.equal(await direct.get("ns", "gone"), null);
    assert.equal(await direct.get("ns", "temp"), null);
    assert.equal(
      (await direct.get("ns", "race"))?.value,
      "newer remote write",
    );
    assert.deepEqual(
      (await direct.history("ns", "s", 10)).map((m) => m.content),
      ["m1", "m2"],
    );
    assert.equal(
      (await d.hosted.get("ns", "race"))?.value,
      "newer remote write",
    );
    await d.close();
  } finally {
    await direct.close();
  }
  assert.ok(
    h.logs.every((l) => !JSON.stringify(l).includes(server.password)),
  );
}
