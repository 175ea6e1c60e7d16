// PgBackend's lexical ranking on a real PostgreSQL: the built-in index's
// terms and BM25 (same ranks and scores as SearchIndex), respelling, the
// schema 1 → 2 migration of old rows, and totals kept right by two backends
// (two daemons) writing at once.

import assert from "node:assert/strict";
import postgres from "postgres";
import { createLogger } from "../../../platform/log.ts";
import { PgBackend } from "../../../tools/memory/backends/pg.ts";
import type { SearchQuery, StoredEntry } from "../../../tools/memory/model.ts";
import {
  indexText,
  queryTerms,
  SearchIndex,
} from "../../../tools/memory/search_index.ts";
import { respelled } from "../../../tools/memory/search_respell.ts";
import { pgTestIgnore, startPgServer } from "../../pg_server.ts";

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

/** A query as search_memory builds it. */
function asked(text: string, limit = 10): SearchQuery {
  return {
    text,
    terms: queryTerms(text),
    respell: (df) => respelled(text, df),
    limit,
  };
}

const keysOf = (hits: { key: string }[]) => hits.map((h) => h.key);

/** The built-in index over `entries`, for the same query. */
function builtin(entries: StoredEntry[], query: SearchQuery) {
  const index = new SearchIndex();
  for (const e of entries) {
    index.upsert(e.key, indexText(e), null, {
      tags: e.tags,
      sensitive: e.sensitive,
    });
  }
  return index.search(query).lexical;
}

/** Schema 1's tables and rows, as an agentd of that version wrote them. */
const SCHEMA_1 = `
  CREATE TABLE agentd_memory_meta (name text PRIMARY KEY, value text NOT NULL);
  INSERT INTO agentd_memory_meta VALUES ('schema_version', '1');
  CREATE TABLE agentd_memory_entries (
    namespace text COLLATE "C" NOT NULL, key text COLLATE "C" NOT NULL,
    value text NOT NULL, tags text[] NOT NULL DEFAULT '{}',
    sensitive boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL,
    embedder text, embedding real[],
    search tsvector NOT NULL DEFAULT ''::tsvector,
    PRIMARY KEY (namespace, key));
  CREATE INDEX agentd_memory_entries_search ON agentd_memory_entries USING gin (search);
  CREATE TABLE agentd_memory_sessions (namespace text COLLATE "C" NOT NULL,
    session_id text COLLATE "C" NOT NULL, message_count bigint NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (namespace, session_id));
  CREATE TABLE agentd_memory_messages (namespace text COLLATE "C" NOT NULL,
    session_id text COLLATE "C" NOT NULL, seq bigint NOT NULL, role text NOT NULL,
    content text NOT NULL, at timestamptz NOT NULL, extra jsonb,
    PRIMARY KEY (namespace, session_id, seq));
  INSERT INTO agentd_memory_entries (namespace, key, value, created_at, updated_at, search)
  SELECT 'ns', 'filler-' || lpad(i::text, 4, '0'),
    'Mel: the weekly meeting notes, item ' || i, now(), now(),
    setweight(to_tsvector('simple', 'filler ' || i), 'A') ||
      to_tsvector('simple', 'mel weekly meet note item ' || i)
  FROM generate_series(1, 1200) AS i;
  INSERT INTO agentd_memory_entries (namespace, key, value, created_at, updated_at, search)
  VALUES ('ns', 'festival', 'Caroline: I went to the music festival', now(), now(),
    setweight(to_tsvector('simple', 'festival'), 'A') ||
      to_tsvector('simple', 'caroline went music festiv'));`;

const TotalsRow = (row: Record<string, unknown> | undefined) => ({
  entries: Number(row?.entries),
  length: Number(row?.length),
  rows: Number(row?.rows),
  indexed: Number(row?.indexed),
  unindexed: Number(row?.unindexed),
});

/** The stats rows' totals and a recount of the entries they stand for. */
async function totals(sql: postgres.Sql, namespace: string) {
  const [row] = await sql`SELECT
      (SELECT coalesce(sum(entries), 0) FROM agentd_memory_stats
        WHERE namespace = ${namespace}) AS entries,
      (SELECT coalesce(sum(length), 0) FROM agentd_memory_stats
        WHERE namespace = ${namespace}) AS length,
      (SELECT count(*) FROM agentd_memory_entries WHERE namespace = ${namespace}) AS rows,
      (SELECT coalesce(sum(search_length), 0) FROM agentd_memory_entries
        WHERE namespace = ${namespace}) AS indexed,
      (SELECT count(*) FROM agentd_memory_entries
        WHERE namespace = ${namespace} AND search_length IS NULL) AS unindexed`;
  return TotalsRow(row);
}

Deno.test({
  name: "PgBackend lexical search: the built-in terms and BM25",
  ignore,
  async fn(t) {
    const server = await startPgServer();
    let dbCount = 0;
    const log = createLogger({ sink: () => {} });
    const open = async (url: string) =>
      await PgBackend.connect({ url, key: server.password, log });
    const admin = (url: string) =>
      postgres(url, { password: server.password, onnotice: () => {} });
    try {
      await t.step("stems, stop words, speakers and IDF", async () => {
        const pg = await open(await server.createDatabase(`t${++dbCount}`));
        try {
          const entries = [
            entry("run", "She runs every morning"),
            entry("common", "meeting meeting meeting agenda"),
            entry("rare", "zebra sighting on the way to the agenda"),
            entry("said", "Caroline: I adopted a puppy last week"),
            entry("mentioned", "Mel: wow, Caroline and the puppy!"),
            ...Array.from(
              { length: 6 },
              (_, i) => entry(`m${i}`, `meeting number ${i} about the plan`),
            ),
          ];
          for (const e of entries) await pg.put(e, "upsert");
          // Stemming: "running" meets "runs".
          assert.deepEqual(
            keysOf((await pg.search("ns", asked("running"))).lexical),
            ["run"],
          );
          // Stop words match nothing, so a question of them finds nothing.
          assert.deepEqual(
            (await pg.search("ns", asked("what is the way to do it"))).lexical
              .map((h) => h.key),
            ["rare"],
          );
          // IDF: the rare term outweighs three of a common one.
          const idf = await pg.search("ns", asked("zebra meeting"));
          assert.equal(idf.lexical[0].key, "rare");
          // The speaker of a turn ranks above a turn that names her.
          const puppy = await pg.search("ns", asked("Caroline puppy"));
          assert.deepEqual(keysOf(puppy.lexical), ["said", "mentioned"]);
          // Same ranks and scores as the built-in index.
          for (
            const text of [
              "zebra meeting",
              "Caroline puppy",
              "meeting plan agenda",
              "running morning",
            ]
          ) {
            const ours = (await pg.search("ns", asked(text))).lexical;
            const theirs = builtin(entries, asked(text));
            assert.deepEqual(keysOf(ours), keysOf(theirs), text);
            ours.forEach((hit, i) =>
              assert.ok(Math.abs(hit.score - theirs[i].score) < 1e-9, text)
            );
          }
        } finally {
          await pg.close();
        }
      });

      await t.step(
        "a typing slip is respelled to a word entries hold",
        async () => {
          const pg = await open(await server.createDatabase(`t${++dbCount}`));
          try {
            await pg.put(entry("f", "We loved the jazz festival"), "upsert");
            await pg.put(entry("g", "The garden needs water"), "upsert");
            const slip = await pg.search("ns", asked("which fesetival"));
            assert.deepEqual(keysOf(slip.lexical), ["f"]);
            const builtinSlip = builtin(
              [
                entry("f", "We loved the jazz festival"),
                entry("g", "The garden needs water"),
              ],
              asked("which fesetival"),
            );
            assert.ok(
              Math.abs(slip.lexical[0].score - builtinSlip[0].score) < 1e-9,
            );
          } finally {
            await pg.close();
          }
        },
      );

      await t.step(
        "a value of more terms than a tsvector holds is stored and found by its first",
        async () => {
          const pg = await open(await server.createDatabase(`t${++dbCount}`));
          try {
            // 250k CJK characters: ~250k distinct bigrams, 1.5 MB of lexemes.
            let seed = 7;
            const chars = Array.from({ length: 250_000 }, () => {
              seed ^= seed << 13; // xorshift32: every bit varies
              seed ^= seed >>> 17;
              seed ^= seed << 5;
              return String.fromCharCode(0x4e00 + (seed >>> 0) % 20000);
            });
            const big = entry("cjk", "東京 " + chars.join(""));
            await pg.put(big, "upsert");
            assert.deepEqual(await pg.get("ns", "cjk"), big);
            const hits = await pg.search("ns", asked("東京"));
            assert.deepEqual(keysOf(hits.lexical), ["cjk"]);
          } finally {
            await pg.close();
          }
        },
      );

      await t.step(
        "a schema 1 database is migrated and its rows reindexed",
        async () => {
          const url = await server.createDatabase(`t${++dbCount}`);
          const sql = admin(url);
          try {
            await sql.unsafe(SCHEMA_1);
            const pg = await open(url);
            try {
              const [version] = await sql`SELECT value FROM agentd_memory_meta
              WHERE name = 'schema_version'`;
              assert.equal(version.value, "2");
              const after = await totals(sql, "ns");
              assert.deepEqual(after, {
                entries: 1201,
                length: after.indexed,
                rows: 1201,
                indexed: after.indexed,
                unindexed: 0,
              });
              // Speaker terms and stems only the new terms hold.
              const said = await pg.search(
                "ns",
                asked("What did Caroline go to?"),
              );
              assert.equal(said.lexical[0].key, "festival");
              const spoken = await pg.search("ns", asked("Mel", 3));
              assert.equal(spoken.lexical.length, 3);
              const slip = await pg.search("ns", asked("the fesetival"));
              assert.deepEqual(keysOf(slip.lexical), ["festival"]);
              // A second start finds nothing left to do.
              const again = await open(url);
              await again.close();
              assert.deepEqual(await totals(sql, "ns"), after);
            } finally {
              await pg.close();
            }
          } finally {
            await sql.end();
          }
        },
      );

      await t.step(
        "two backends writing at once keep the totals and ranks right",
        async () => {
          const url = await server.createDatabase(`t${++dbCount}`);
          const a = await open(url);
          const b = await open(url);
          const sql = admin(url);
          try {
            const words = [
              "alpha",
              "bravo",
              "charlie",
              "delta",
              "echo",
              "foxtrot",
            ];
            const text = (i: number, round: number) =>
              `${words[i % 6]} ${words[(i * round) % 6]} note ${i} ${
                "filler ".repeat(i % 5)
              }`;
            // Both write the same 40 keys twice over, then each deletes some.
            await Promise.all([a, b].map(async (pg, who) => {
              for (let round = 1; round <= 2; round++) {
                await Promise.all(
                  Array.from(
                    { length: 40 },
                    (_, i) =>
                      pg.put(entry(`k${i}`, text(i, round + who)), "upsert"),
                  ),
                );
              }
              await Promise.all(
                Array.from(
                  { length: 5 },
                  (_, i) => pg.delete("ns", `k${i * 2 + who}`),
                ),
              );
            }));
            const after = await totals(sql, "ns");
            assert.equal(after.rows, 30);
            assert.equal(after.entries, after.rows);
            assert.equal(after.length, after.indexed);
            assert.equal(after.unindexed, 0);
            // Ranks agree with the built-in index over what was left.
            const left = (await a.list("ns", { limit: 100 })).entries;
            for (const query of ["alpha note", "charlie filler", "echo 7"]) {
              const ours = (await b.search("ns", asked(query))).lexical;
              const theirs = builtin(left, asked(query));
              assert.deepEqual(keysOf(ours), keysOf(theirs), query);
              ours.forEach((hit, i) =>
                assert.ok(Math.abs(hit.score - theirs[i].score) < 1e-9, query)
              );
            }
          } finally {
            await sql.end();
            await a.close();
            await b.close();
          }
        },
      );
    } finally {
      await server.destroy();
    }
  },
});
