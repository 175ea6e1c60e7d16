// PgBackend against a real, private PostgreSQL server (see pg_server.ts).

import assert from "node:assert/strict";
import postgres from "postgres";
import { createLogger, type Logger } from "../../../platform/log.ts";
import { EntryNotFound } from "../../../tools/memory/backends/port.ts";
import { BackendUnavailable } from "../../../tools/memory/backends/port.ts";
import { PgBackend } from "../../../tools/memory/backends/pg.ts";
import type {
  Message,
  SearchQuery,
  StoredEntry,
} from "../../../tools/memory/model.ts";
import { tokenize } from "../../../tools/memory/search_index.ts";
import { pgTestIgnore, startPgServer, startTcpProxy } from "../../pg_server.ts";

const ignore = pgTestIgnore();

function entry(
  key: string,
  value: string,
  fields: Partial<StoredEntry> = {},
): StoredEntry {
  return {
    namespace: "ns",
    key,
    value,
    tags: [],
    sensitive: false,
    created_at: "2025-01-01T00:00:00.000Z",
    updated_at: "2025-01-01T00:00:00.000Z",
    embedding: null,
    ...fields,
  };
}

/** Stands in for pgvector: the names and operator the pgvector path uses. */
const PGVECTOR_SHIM = `
  CREATE DOMAIN vector AS real[];
  CREATE FUNCTION vector_dims(vector) RETURNS int LANGUAGE sql IMMUTABLE
    AS 'SELECT cardinality($1)';
  CREATE FUNCTION shim_cosine_distance(vector, vector) RETURNS float8
    LANGUAGE sql IMMUTABLE AS $$
      SELECT 1 - (SELECT sum(a * b) FROM unnest($1::real[], $2::real[]) AS t(a, b))
        / sqrt((SELECT sum(a * a) FROM unnest($1::real[]) AS a)
          * (SELECT sum(b * b) FROM unnest($2::real[]) AS b)) $$;
  CREATE OPERATOR <=> (LEFTARG = vector, RIGHTARG = vector,
    FUNCTION = shim_cosine_distance);
  ALTER TABLE agentd_memory_entries ALTER COLUMN embedding TYPE vector;`;

/** A query as the service builds it: terms from the shared tokenizer. */
function lexical(text: string, limit: number): SearchQuery {
  return { text, terms: tokenize(text), limit };
}

function testLog(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  return { log: createLogger({ sink: (l) => lines.push(l) }), lines };
}

function message(i: number, extra?: Record<string, unknown>): Message {
  const at = new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString();
  const m: Message = {
    role: i % 2 ? "assistant" : "user",
    content: `m${i}`,
    at,
  };
  if (extra) m.extra = extra;
  return m;
}

Deno.test({
  name: "PgBackend on a real PostgreSQL",
  ignore,
  async fn(t) {
    const server = await startPgServer();
    let dbCount = 0;
    /** A backend on a fresh database, closed after `body`. */
    const withDb = async (
      body: (pg: PgBackend, url: string) => Promise<void>,
    ): Promise<void> => {
      const url = await server.createDatabase(`t${++dbCount}`);
      const pg = await PgBackend.connect({
        url,
        key: server.password,
        log: testLog().log,
      });
      try {
        await body(pg, url);
      } finally {
        await pg.close();
      }
    };
    try {
      await t.step(
        "upsert, update of a missing key, delete",
        () =>
          withDb(async (pg) => {
            assert.equal(pg.kind, "postgres");
            assert.equal(await pg.put(entry("a", "one"), "upsert"), null);
            const second = entry("a", "two", {
              tags: ["x"],
              updated_at: "2025-01-02T00:00:00.000Z",
            });
            assert.deepEqual(
              await pg.put(second, "upsert"),
              entry("a", "one"),
            );
            assert.deepEqual(await pg.get("ns", "a"), second);
            await assert.rejects(
              pg.put(entry("missing", "v"), "update"),
              EntryNotFound,
            );
            assert.equal(await pg.get("ns", "missing"), null);
            assert.deepEqual(
              await pg.put(entry("a", "three"), "update"),
              second,
            );
            assert.equal(await pg.delete("ns", "a"), true);
            assert.equal(await pg.delete("ns", "a"), false);
            assert.equal(await pg.get("ns", "a"), null);
            await assert.rejects(
              pg.put(entry("nul", "a\u0000b"), "upsert"),
              /NUL character/,
            );
          }),
      );

      await t.step(
        "list filters by tags and pages by key",
        () =>
          withDb(async (pg) => {
            for (let i = 0; i < 25; i++) {
              const tags = i % 2 ? ["odd", "n"] : ["even", "n"];
              await pg.put(
                entry(`k${String(i).padStart(2, "0")}`, `v${i}`, { tags }),
                "upsert",
              );
            }
            await pg.put(entry("other", "v", { namespace: "ns2" }), "upsert");
            const keys: string[] = [];
            let cursor: string | null = null;
            let pages = 0;
            do {
              const page = await pg.list("ns", {
                tags: ["n", "odd"],
                limit: 5,
                cursor,
              });
              keys.push(...page.entries.map((e) => e.key));
              cursor = page.cursor;
              pages++;
            } while (cursor);
            assert.equal(pages, 3);
            assert.deepEqual(
              keys,
              Array.from(
                { length: 12 },
                (_, i) => `k${String(i * 2 + 1).padStart(2, "0")}`,
              ),
            );
            const all = await pg.list("ns", { limit: 1000 });
            assert.equal(all.entries.length, 25);
            assert.equal(all.cursor, null);
            await assert.rejects(
              pg.list("ns", { limit: 5, cursor: "bogus" }),
              /Invalid list cursor/,
            );
            await assert.rejects(pg.list("ns", { limit: 0 }), /List limit/);
          }),
      );

      await t.step(
        "unicode keys and values, a 200 KB value",
        () =>
          withDb(async (pg) => {
            const big = "lorem ipsum ".repeat(200 * 1024 / 12) + "omega";
            const cases = [
              entry("emoji 🎉", "😀 grinning 🇫🇷 flag"),
              entry("東京/メモ", "日本語のテキスト"),
              entry("مرحبا", "שלום עולם e\u0301 combining"),
              entry("big", big, { tags: ["größe", "🏷️"] }),
            ];
            for (const e of cases) await pg.put(e, "upsert");
            for (const e of cases) {
              assert.deepEqual(await pg.get("ns", e.key), e);
            }
            assert.equal(big.length > 200 * 1000, true);
            const keys = (await pg.list("ns", { limit: 10 })).entries.map((e) =>
              e.key
            );
            // Byte (UTF-8) order, like the KV backend.
            assert.deepEqual(keys, ["big", "emoji 🎉", "مرحبا", "東京/メモ"]);
            const tag = await pg.search("ns", lexical("Größe", 5));
            assert.deepEqual(tag.lexical.map((h) => h.key), ["big"]);
            // The whole 200 KB value is indexed, up to its last word.
            const end = await pg.search("ns", lexical("omega", 5));
            assert.deepEqual(end.lexical.map((h) => h.key), ["big"]);
            const cjk = await pg.search("ns", lexical("テキスト", 5));
            assert.deepEqual(cjk.lexical.map((h) => h.key), ["東京/メモ"]);
          }),
      );

      await t.step(
        "conversations: ordering, limit, extras, sessions",
        () =>
          withDb(async (pg) => {
            assert.equal(await pg.appendMessages("ns", "s1", []), 0);
            assert.equal(
              await pg.appendMessages("ns", "s1", [
                message(1),
                message(2, { name: "bob", n: 1 }),
                message(3),
              ]),
              3,
            );
            assert.equal(
              await pg.appendMessages("ns", "s1", [message(4), message(5)]),
              5,
            );
            assert.equal(await pg.appendMessages("ns", "s1", []), 5);
            await assert.rejects(
              pg.appendMessages("ns", "s1", [message(6, { bad: "a\u0000" })]),
              /NUL character/,
            );
            await pg.appendMessages("ns", "s0", [message(9)]);
            await pg.appendMessages("other", "s9", [message(9)]);
            const last3 = await pg.history("ns", "s1", 3);
            assert.deepEqual(last3, [message(3), message(4), message(5)]);
            const all = await pg.history("ns", "s1", 100);
            assert.deepEqual(all[1], message(2, { name: "bob", n: 1 }));
            assert.equal(all.length, 5);
            assert.deepEqual(await pg.history("ns", "nope", 10), []);
            assert.deepEqual(await pg.sessions("ns"), ["s0", "s1"]);
          }),
      );

      await t.step(
        "concurrent appends from two connections",
        () =>
          withDb(async (pg, url) => {
            const other = await PgBackend.connect({
              url,
              key: server.password,
              log: testLog().log,
            });
            try {
              const writes = [];
              for (let i = 0; i < 20; i++) {
                writes.push(pg.appendMessages("ns", "s", [message(i)]));
                writes.push(
                  other.appendMessages("ns", "s", [
                    message(100 + i),
                    message(200 + i),
                  ]),
                );
              }
              const counts = await Promise.all(writes);
              // Every append saw a distinct total: no two took the same seqs.
              assert.equal(new Set(counts).size, 40);
              assert.equal(Math.max(...counts), 60);
              const history = await other.history("ns", "s", 1000);
              assert.equal(history.length, 60);
              assert.equal(new Set(history.map((m) => m.content)).size, 60);
              // Each two-message append stays contiguous.
              for (let i = 0; i < 20; i++) {
                const at = history.findIndex((m) =>
                  m.content === `m${100 + i}`
                );
                assert.equal(history[at + 1].content, `m${200 + i}`);
              }
            } finally {
              await other.close();
            }
          }),
      );

      await t.step(
        "search: lexical and vector rankings",
        () =>
          withDb(async (pg) => {
            const vec = (...v: number[]) => Float32Array.from(v);
            const emb = (embedder: string, ...v: number[]) => ({
              embedder,
              vector: vec(...v),
            });
            await pg.put(
              entry("deploy-notes", "how we deploy the staging cluster", {
                embedding: emb("e1", 1, 0, 0),
              }),
              "upsert",
            );
            await pg.put(
              entry("recipes", "pancakes need flour and milk; deploy syrup", {
                embedding: emb("e1", 0.6, 0.8, 0),
              }),
              "upsert",
            );
            await pg.put(
              entry("holiday", "beach and sun", {
                tags: ["deploy"],
                embedding: emb("e1", 0, 1, 0),
              }),
              "upsert",
            );
            await pg.put(
              entry("secret-deploy", "enc:v1:aaa:deploycluster", {
                sensitive: true,
                tags: ["ops"],
              }),
              "upsert",
            );
            await pg.put(
              entry("other-embedder", "nothing", {
                embedding: emb("e2", 1, 0, 0),
              }),
              "upsert",
            );
            await pg.put(
              entry("elsewhere", "deploy cluster", {
                namespace: "ns2",
                embedding: emb("e1", 1, 0, 0),
              }),
              "upsert",
            );
            const deploy = await pg.search(
              "ns",
              lexical("deployed the clusters", 10),
            );
            const keys = deploy.lexical.map((h) => h.key);
            // Both terms beat one term; the key's weight beats the body's.
            assert.equal(keys[0], "deploy-notes");
            assert.deepEqual(
              new Set(keys),
              new Set(["deploy-notes", "recipes", "holiday", "secret-deploy"]),
            );
            assert.ok(deploy.lexical.every((h) => h.score > 0));
            assert.deepEqual(deploy.vector, []);
            // A sensitive value is not searchable, its key and tags are.
            const cluster = await pg.search(
              "ns",
              lexical("deploycluster", 10),
            );
            assert.deepEqual(cluster.lexical, []);
            const ops = await pg.search("ns", lexical("ops", 10));
            assert.deepEqual(ops.lexical.map((h) => h.key), ["secret-deploy"]);

            const near = await pg.search("ns", {
              text: "",
              terms: [],
              vector: vec(0.9, 0.1, 0),
              embedder: "e1",
              limit: 2,
            });
            assert.deepEqual(near.lexical, []);
            assert.deepEqual(near.vector.map((h) => h.key), [
              "deploy-notes",
              "recipes",
            ]);
            assert.ok(near.vector[0].score > near.vector[1].score);
            assert.ok(Math.abs(near.vector[0].score - 0.9939) < 0.001);
            const wrongDims = await pg.search("ns", {
              text: "",
              terms: [],
              vector: vec(1, 0),
              embedder: "e1",
              limit: 5,
            });
            assert.deepEqual(wrongDims.vector, []);
            const health = await pg.health();
            assert.equal(health.status, "ok");
            assert.match(
              health.detail ?? "",
              /vector search: (pgvector|cosine)/,
            );
          }),
      );

      await t.step(
        "countByNamespace, staleEmbeddings, setEmbedding",
        () =>
          withDb(async (pg) => {
            assert.deepEqual(await pg.countByNamespace(), {});
            const e1 = {
              embedder: "e1",
              vector: Float32Array.from([0.1, 0.2]),
            };
            await pg.put(entry("a", "x"), "upsert");
            await pg.put(entry("b", "x", { embedding: e1 }), "upsert");
            await pg.put(
              entry("c", "x", {
                embedding: { ...e1, embedder: "e0" },
              }),
              "upsert",
            );
            await pg.put(entry("s", "enc", { sensitive: true }), "upsert");
            await pg.put(entry("z", "x", { namespace: "n2" }), "upsert");
            assert.deepEqual(await pg.countByNamespace(), { ns: 4, n2: 1 });
            const stale = await pg.staleEmbeddings("e1", 10);
            assert.deepEqual(stale.map((e) => `${e.namespace}/${e.key}`), [
              "n2/z",
              "ns/a",
              "ns/c",
            ]);
            assert.equal((await pg.staleEmbeddings("e1", 1)).length, 1);
            // A changed entry (other updated_at) keeps its state.
            await pg.setEmbedding("ns", "a", "2024-01-01T00:00:00.000Z", e1);
            assert.equal((await pg.get("ns", "a"))?.embedding, null);
            await pg.setEmbedding("ns", "a", "2025-01-01T00:00:00.000Z", e1);
            assert.deepEqual((await pg.get("ns", "a"))?.embedding, e1);
            await pg.setEmbedding("ns", "s", "2025-01-01T00:00:00.000Z", e1);
            assert.equal((await pg.get("ns", "s"))?.embedding, null);
            assert.deepEqual(
              (await pg.staleEmbeddings("e1", 10)).map((e) => e.key),
              ["z", "c"],
            );
            await pg.setEmbedding("ns", "b", "2025-01-01T00:00:00.000Z", null);
            assert.equal((await pg.get("ns", "b"))?.embedding, null);
          }),
      );

      await t.step("the pgvector query path, on a SQL stand-in", async () => {
        // Debian bookworm has no pgvector package; a domain named `vector`
        // with vector_dims() and a cosine <=> runs the same SQL path.
        const url = await server.createDatabase("shim");
        const first = await PgBackend.connect({
          url,
          key: server.password,
          log: testLog().log,
        });
        const detail = (await first.health()).detail ?? "";
        await first.close();
        // With the real extension the other steps already ran this path.
        if (detail.includes("pgvector")) return;
        const sql = postgres(url, {
          password: server.password,
          onnotice: () => {},
        });
        try {
          await sql.unsafe(PGVECTOR_SHIM);
        } finally {
          await sql.end();
        }
        const pg = await PgBackend.connect({
          url,
          key: server.password,
          log: testLog().log,
        });
        try {
          assert.match((await pg.health()).detail ?? "", /pgvector/);
          const emb = (...v: number[]) => ({
            embedder: "e1",
            vector: Float32Array.from(v),
          });
          await pg.put(entry("a", "x", { embedding: emb(1, 0, 0) }), "upsert");
          await pg.put(
            entry("b", "x", { embedding: emb(0.6, 0.8, 0) }),
            "upsert",
          );
          await pg.put(entry("c", "x", { embedding: emb(0, 1, 0) }), "upsert");
          await pg.put(entry("d", "x", { embedding: emb(1, 0) }), "upsert");
          const near = await pg.search("ns", {
            text: "",
            terms: [],
            vector: Float32Array.from([0.9, 0.1, 0]),
            embedder: "e1",
            limit: 2,
          });
          assert.deepEqual(near.vector.map((h) => h.key), ["a", "b"]);
          assert.ok(Math.abs(near.vector[0].score - 0.9939) < 0.001);
          assert.deepEqual(
            (await pg.get("ns", "b"))?.embedding,
            emb(0.6, 0.8, 0),
          );
        } finally {
          await pg.close();
        }
      });

      await t.step(
        "two instances on one database see each other",
        () =>
          withDb(async (pg, url) => {
            const { log, lines } = testLog();
            // A second daemon starting at the same time runs the migration too.
            const [other, third] = await Promise.all([
              PgBackend.connect({ url, key: server.password, log }),
              PgBackend.connect({ url, key: server.password, log }),
            ]);
            try {
              await pg.put(entry("from-a", "1"), "upsert");
              assert.equal((await other.get("ns", "from-a"))?.value, "1");
              await other.put(entry("from-b", "2"), "upsert");
              assert.equal((await pg.get("ns", "from-b"))?.value, "2");
              assert.equal(await third.delete("ns", "from-a"), true);
              assert.equal(await pg.get("ns", "from-a"), null);
              assert.ok(lines.every((l) => !l.includes(server.password)));
            } finally {
              await other.close();
              await third.close();
            }
          }),
      );

      await t.step(
        "a bad password gives a clear error without it",
        async () => {
          const { log, lines } = testLog();
          const wrong = "wrong-password-" + crypto.randomUUID();
          const error = await PgBackend.connect({
            url: server.url,
            key: wrong,
            log,
          }).then(() => null, (e: unknown) => e);
          assert.ok(error instanceof BackendUnavailable);
          assert.match(
            error.message,
            /^PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres rejected the login: password authentication failed/,
          );
          assert.ok(!error.message.includes(wrong));
          assert.ok(lines.every((l) => !l.includes(wrong)));
          // A password inside the URL is not echoed either.
          const inUrl = server.url.replace("postgres@", `postgres:${wrong}@`);
          const error2 = await PgBackend.connect({ url: inUrl, log }).then(
            () => null,
            (e: unknown) => e,
          );
          assert.ok(error2 instanceof Error);
          assert.ok(!error2.message.includes(wrong), error2.message);
        },
      );

      await t.step("an unreachable server fails fast and clearly", async () => {
        const started = performance.now();
        // A port nothing listens on.
        const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
        const port = listener.addr.port;
        listener.close();
        await assert.rejects(
          PgBackend.connect({
            url: `postgres://agentd@127.0.0.1:${port}/agentd`,
            key: "irrelevant-password",
            log: testLog().log,
            connectTimeoutMs: 2000,
          }),
          (e: unknown) =>
            e instanceof BackendUnavailable &&
            e.message ===
              `Cannot reach PostgreSQL at postgres://agentd@127.0.0.1:${port}/agentd: connection refused`,
        );
        assert.ok(performance.now() - started < 3000);
      });

      await t.step(
        "a hung server fails within the deadline",
        () =>
          withDb(async (_, url) => {
            // Through a proxy that holds all traffic: TCP connects, nothing answers.
            const proxy = startTcpProxy(server.port);
            const pg = await PgBackend.connect({
              url: url.replace(`:${server.port}/`, `:${proxy.port}/`),
              key: server.password,
              log: testLog().log,
              connectTimeoutMs: 500,
              statementTimeoutMs: 500,
            });
            try {
              await pg.put(entry("a", "1"), "upsert");
              proxy.partition();
              const started = performance.now();
              await assert.rejects(
                pg.get("ns", "a"),
                (e: unknown) =>
                  e instanceof BackendUnavailable &&
                  e.message.endsWith(": no answer within 1 s"),
              );
              // The deadline is 1 s; the margin is for loaded CI machines.
              assert.ok(performance.now() - started < 4000);
              assert.equal((await pg.health()).status, "down");
              proxy.heal();
              // A fresh pool: the stuck connections were dropped.
              assert.equal((await pg.get("ns", "a"))?.value, "1");
            } finally {
              await pg.close();
              await proxy.close();
            }
          }),
      );

      await t.step(
        "an outage fails fast, then it reconnects",
        () =>
          withDb(async (pg) => {
            await pg.put(entry("a", "1"), "upsert");
            await server.stop();
            try {
              const started = performance.now();
              await assert.rejects(pg.get("ns", "a"), BackendUnavailable);
              assert.ok(performance.now() - started < 5000);
              assert.equal((await pg.health()).status, "down");
            } finally {
              await server.start();
            }
            assert.equal((await pg.get("ns", "a"))?.value, "1");
          }),
      );
    } finally {
      await server.destroy();
    }
  },
});
