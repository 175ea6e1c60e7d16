// The Store contract on a real, private PostgreSQL server (tests/pg_server.ts),
// plus what only a shared engine has: two stores on one database agree.
import assert from "node:assert/strict";
import postgres from "postgres";
import { PgStore } from "../../../platform/store/pg.ts";
import { STORE_SCHEMA_VERSION } from "../../../platform/store/pg_schema.ts";
import { StoreUnavailable } from "../../../platform/store/mod.ts";
import {
  type PgServer,
  pgTestIgnore,
  startPgServer,
  startTcpProxy,
} from "../../pg_server.ts";
import { storeContract } from "./contract.ts";

const ignore = pgTestIgnore();
let server: PgServer | null = null;
let databases = 0;

async function freshStore(): Promise<PgStore> {
  server ??= await startPgServer();
  const db = await server.createDatabase(`contract_${++databases}`);
  return await PgStore.connect({ url: db, password: server.password });
}

if (!ignore) {
  storeContract("PgStore", async () => {
    const store = await freshStore();
    return { store, cleanup: () => store.close() };
  });
}

Deno.test({
  name: "PgStore: two connections see each other's commits and checks",
  ignore,
  async fn() {
    const a = await freshStore();
    const b = await PgStore.connect({
      url: a.url,
      password: server?.password,
    });
    try {
      const v = await a.set(["agents", "x"], { n: 1 });
      assert.equal((await b.get(["agents", "x"]))?.version, v);
      const stale = await b.commit({
        checks: [{ key: ["agents", "x"], version: null }],
        mutations: [{ type: "set", key: ["agents", "x"], value: 2 }],
      });
      assert.deepEqual(stale, { ok: false });
      // Concurrent increments through both stores lose nothing.
      await a.set(["counter"], 0);
      const bump = async (store: PgStore) => {
        for (;;) {
          const entry = await store.get(["counter"]);
          const ok = await store.commit({
            checks: [{ key: ["counter"], version: entry?.version ?? null }],
            mutations: [{
              type: "set",
              key: ["counter"],
              value: Number(entry?.value) + 1,
            }],
          });
          if (ok.ok) return;
        }
      };
      await Promise.all(
        Array.from({ length: 40 }, (_, i) => bump(i % 2 ? a : b)),
      );
      assert.equal((await b.get(["counter"]))?.value, 40);
    } finally {
      await a.close();
      await b.close();
    }
  },
});

Deno.test({
  name: "PgStore: a stopped server is StoreUnavailable, and it recovers",
  ignore,
  async fn() {
    const store = await freshStore();
    try {
      await store.set(["k"], 1);
      await server?.stop();
      await assert.rejects(store.set(["k"], 2), StoreUnavailable);
      await assert.rejects(store.ping(), StoreUnavailable);
      await server?.start();
      // Reconnects by itself; no fixed sleep: retry until it answers.
      for (;;) {
        try {
          await store.ping();
          break;
        } catch (error) {
          assert.ok(error instanceof StoreUnavailable);
        }
      }
      assert.equal((await store.get(["k"]))?.value, 1);
      await store.set(["k"], 3);
      assert.equal((await store.get(["k"]))?.value, 3);
    } finally {
      await store.close();
    }
  },
});

Deno.test({
  name:
    "PgStore: daemons starting together migrate once; a newer schema is refused",
  ignore,
  async fn() {
    server ??= await startPgServer();
    const url = await server.createDatabase(`migrate_${++databases}`);
    const password = server.password;
    const stores = await Promise.all(
      Array.from({ length: 4 }, () => PgStore.connect({ url, password })),
    );
    try {
      await stores[0].set(["k"], 1);
      assert.equal((await stores[3].get(["k"]))?.value, 1);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
    const sql = postgres(url, { password, onnotice: () => {} });
    try {
      const rows = await sql`SELECT version FROM agentd_store_migrations`;
      assert.deepEqual(rows.map((r) => r.version), [STORE_SCHEMA_VERSION]);
      await sql`INSERT INTO agentd_store_migrations (version) VALUES (99)`;
    } finally {
      await sql.end();
    }
    await assert.rejects(PgStore.connect({ url, password }), {
      message: new RegExp(
        `created by a newer agentd \\(schema 99, this one knows ${STORE_SCHEMA_VERSION}\\)`,
      ),
    });
  },
});

Deno.test({
  name:
    "PgStore: a hung server (network partition) is StoreUnavailable after the deadline; healed, it works",
  ignore,
  async fn() {
    server ??= await startPgServer();
    const db = new URL(await server.createDatabase(`partition_${++databases}`));
    const proxy = startTcpProxy(server.port);
    db.port = String(proxy.port);
    const store = await PgStore.connect({
      url: db.toString(),
      password: server.password,
      connectTimeoutMs: 500,
      statementTimeoutMs: 500,
    });
    try {
      await store.set(["k"], 1);
      proxy.partition();
      await assert.rejects(store.ping(), {
        name: "StoreUnavailable",
        message: /did not answer within 1000 ms/,
      });
      await assert.rejects(store.set(["k"], 2), StoreUnavailable);
      proxy.heal();
      for (;;) {
        try {
          await store.ping();
          break;
        } catch (error) {
          assert.ok(error instanceof StoreUnavailable);
        }
      }
      await store.set(["k"], 3);
      assert.equal((await store.get(["k"]))?.value, 3);
    } finally {
      proxy.heal();
      await store.close();
      await proxy.close();
    }
  },
});

Deno.test({
  name: "PgStore: cleanup server",
  ignore,
  async fn() {
    await server?.destroy();
  },
});
