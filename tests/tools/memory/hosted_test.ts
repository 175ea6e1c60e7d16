// Hosted memory through real daemons on a real PostgreSQL: every tool, two
// daemons sharing one database, an outage served from the cache with writes
// queued, and recovery with nothing lost.

import assert from "node:assert/strict";
import {
  type Daemon,
  freePort,
  logged,
  loggedAll,
  spawnServe,
  tempDir,
  waitFor,
} from "../../helpers.ts";
import { pgTestIgnore, startPgServer } from "../../pg_server.ts";
import {
  call,
  callError,
  connectMemory as connect,
  exerciseAllTools,
  memoryHealth,
} from "./scenario.ts";
import { metricValue, startWebhook } from "./observe.ts";

Deno.test({
  name:
    "memory hosted on PostgreSQL: every tool, two daemons, outage from cache, recovery without loss",
  ignore: pgTestIgnore(),
  async fn() {
    const pg = await startPgServer();
    await using webhook = startWebhook();
    await using dirA = await tempDir();
    await using dirB = await tempDir();
    const daemons: Daemon[] = [];
    const clients: { close(): Promise<void> }[] = [];
    try {
      const url = await pg.createDatabase("agentd_memory");
      const env = {
        AGENTD_MEMORY__STORAGE: "hosted",
        AGENTD_MEMORY__URL: url,
        AGENTD_MEMORY__KEY: pg.password,
        AGENTD_MEMORY__SYNC_INTERVAL_MS: "200",
      };
      const a = await spawnServe(dirA.path, {
        env: { ...env, AGENTD_MEMORY__ALERT_WEBHOOK: webhook.url },
      });
      daemons.push(a);
      const b = await spawnServe(dirB.path, { env });
      daemons.push(b);
      const onA = await connect(a);
      clients.push(onA);
      const onB = await connect(b);
      clients.push(onB);

      await exerciseAllTools(onA.client);
      const healthy = await memoryHealth(a);
      assert.equal(healthy.memory.storage, "hosted(postgres)");
      assert.equal(healthy.memory.backend, "ok");

      // Two daemons, one database: each sees the other's writes.
      assert.equal(
        (await call(onB.client, "retrieve_memory", {
          namespace: "notes",
          key: "greeting",
        })).value,
        "bonjour",
      );
      await call(onB.client, "store_memory", {
        namespace: "shared",
        key: "from-b",
        value: "written by daemon B",
      });
      assert.equal(
        (await call(onA.client, "retrieve_memory", {
          namespace: "shared",
          key: "from-b",
        })).value,
        "written by daemon B",
      );
      const found = await call(onB.client, "search_memory", {
        namespace: "facts",
        query: "dog running",
      });
      assert.equal((found.hits as { key: string }[])[0].key, "pets");

      // Outage: reads come from A's cache, writes are queued, /health says degraded.
      await pg.stop();
      assert.equal(
        (await call(onA.client, "retrieve_memory", {
          namespace: "notes",
          key: "greeting",
        })).value,
        "bonjour",
      );
      for (let i = 0; i < 5; i++) {
        await call(onA.client, "store_memory", {
          namespace: "offline",
          key: `k${i}`,
          value: `queued ${i}`,
        });
      }
      await call(onA.client, "store_conversation", {
        session_id: "offline-chat",
        messages: [{
          role: "user",
          content: "said while the database was down",
        }],
      });
      const degraded = await memoryHealth(a);
      assert.equal(degraded.status, "degraded");
      assert.equal(degraded.memory.status, "degraded");
      assert.equal(degraded.memory.queued_writes, 6);
      assert.match(
        String(degraded.memory.backend_detail),
        /PostgreSQL unreachable since .*6 writes queued/,
      );
      assert.equal(
        (await loggedAll(
          a.logs,
          (log) => log.event === "memory_hosted_unreachable",
          1,
        )).length,
        1,
        "one alert per outage",
      );
      // The operator alert (log line and webhook) and the Prometheus series.
      const down = await waitFor(
        () => Promise.resolve(webhook.received),
        (got) => got.some((a) => a.event === "memory_storage_unavailable"),
      );
      assert.equal(down[0].backend, "hosted(postgres)");
      await logged(
        a.logs,
        (log) =>
          log.event === "alert" && log._event === "memory_storage_unavailable",
      );
      assert.equal(await metricValue(a, "agentd_memory_storage_degraded"), 1);
      assert.equal(await metricValue(a, "agentd_memory_queued_writes"), 6);
      await callError(onA.client, "retrieve_memory", {
        namespace: "notes",
        key: "never-cached",
      });
      assert.ok(
        (await metricValue(
          a,
          'agentd_memory_storage_cache_total{result="hit"}',
        ) ?? 0) >= 1,
        "the cached entry read while down is a storage cache hit",
      );
      assert.ok(
        (await metricValue(
          a,
          'agentd_memory_storage_cache_total{result="miss"}',
        ) ?? 0) >= 1,
        "a key the cache does not hold is a miss",
      );
      const offlineHits = await call(onA.client, "search_memory", {
        namespace: "offline",
        query: "queued",
      });
      assert.equal(
        (offlineHits.hits as unknown[]).length,
        5,
        "search works from the cache",
      );

      // Recovery: the queue drains; daemon B reads everything A wrote offline.
      await pg.start();
      const recovered = await waitFor(
        () => memoryHealth(a),
        (h) => h.memory.backend === "ok",
        // The probe backs off (200 ms doubling); a loaded machine stretches the outage.
        60_000,
      );
      assert.equal(recovered.status, "ok");
      assert.equal(recovered.memory.queued_writes ?? 0, 0);
      await logged(a.logs, (log) => log.event === "memory_hosted_recovered");
      await waitFor(
        () => Promise.resolve(webhook.received),
        (got) => got.some((a) => a.event === "memory_storage_recovered"),
      );
      assert.equal(await metricValue(a, "agentd_memory_storage_degraded"), 0);
      assert.equal(await metricValue(a, "agentd_memory_queued_writes"), 0);
      for (let i = 0; i < 5; i++) {
        const entry = await call(onB.client, "retrieve_memory", {
          namespace: "offline",
          key: `k${i}`,
        });
        assert.equal(entry.value, `queued ${i}`);
      }
      const chat = await call(onB.client, "get_conversation_history", {
        session_id: "offline-chat",
      });
      assert.deepEqual(
        (chat.messages as { content: string }[]).map((m) => m.content),
        [
          "said while the database was down",
        ],
      );
      assert.ok(
        !JSON.stringify(a.logs).includes(pg.password),
        "the database password is never logged",
      );
      assert.ok(
        !JSON.stringify(a.logs).includes(webhook.url),
        "the webhook URL is never logged",
      );
    } finally {
      for (const client of clients) await client.close().catch(() => {});
      for (const daemon of daemons) assert.equal((await daemon.stop()).code, 0);
      await pg.destroy();
    }
  },
});

Deno.test("memory hosted on KV Connect: an unreachable remote starts degraded, serves from the cache and queues writes", async () => {
  // No KV Connect server can run here: this covers the daemon's side of it
  // (URL handling, the access token, the outage path), not the remote itself.
  await using dir = await tempDir();
  const token = "kv-connect-token-" + crypto.randomUUID();
  const daemon = await spawnServe(dir.path, {
    env: {
      AGENTD_MEMORY__STORAGE: "hosted",
      AGENTD_MEMORY__URL: `https://127.0.0.1:${freePort()}/`,
      AGENTD_MEMORY__KEY: token,
    },
  });
  const on = await connect(daemon);
  try {
    await call(on.client, "store_memory", {
      namespace: "kv",
      key: "k",
      value: "kept locally",
    });
    assert.equal(
      (await call(on.client, "retrieve_memory", { namespace: "kv", key: "k" }))
        .value,
      "kept locally",
    );
    const health = await memoryHealth(daemon);
    assert.equal(health.status, "degraded");
    assert.equal(health.memory.storage, "hosted(kv-connect)");
    assert.match(
      String(health.memory.backend_detail),
      /unreachable since .* 1 writes? queued/,
    );
    assert.ok(
      !JSON.stringify(daemon.logs).includes(token),
      "the access token is never logged",
    );
  } finally {
    await on.close();
    assert.equal((await daemon.stop()).code, 0);
  }
});
