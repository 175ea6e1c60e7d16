// The search queries of PgBackend (pg.ts): lexical ranks by BM25 over the
// built-in index's terms (pg_terms.ts), and vector ranks by pgvector or,
// without it, by cosine over the rows here. Apart from pg.ts, which owns the
// pool and the writes.

import type postgres from "postgres";
import { z } from "zod";
import type { RankedKey, SearchQuery } from "../model.ts";
import { TABLES as T, vectorLiteral, type VectorMode } from "./pg_schema.ts";
import { quoteLexeme } from "./pg_terms.ts";

type Db = postgres.ISql;

const KeyScoreRow = z.object({ key: z.string(), score: z.number() });
const ScoredRow = z.object({
  key: z.string(),
  score: z.number(),
  dfs: z.record(z.string(), z.number()).nullable(),
});
const TermDfRow = z.object({ term: z.string(), df: z.number() });
const KeyVectorRow = z.object({
  key: z.string(),
  embedding: z.array(z.number()),
});

/** BM25's k1 and b, as the built-in index (search_index.ts) uses them. */
const K1 = 1.2;
const B = 0.75;
/** A respelled term counts less than one the query spelled (search_index.ts's weight). */
const RESPELLED_WEIGHT = 0.7;
/** Rounds of document-frequency look-ups a respelling may take (each answers what the last asked). */
const RESPELL_ROUNDS = 4;

/**
 * BM25 ranks, scored as the built-in index scores them, in one statement
 * (one snapshot): the GIN index finds the entries holding any term, their
 * tsvectors give each term's tf and, counted, its document frequency, the
 * stats rows the entry count and total length. A query word no entry holds
 * is respelled (search_respell.ts) and the query scored again with the
 * respellings.
 */
export async function lexicalRanks(
  db: Db,
  namespace: string,
  query: SearchQuery,
): Promise<RankedKey[]> {
  if (query.limit < 1) return [];
  const weights = new Map<string, number>();
  for (const term of query.terms) weights.set(term, 1);
  const first = await scored(db, namespace, weights, query.limit);
  if (!query.respell) return first.hits;
  const known = new Map([...weights.keys()].map((term) => [term, 0]));
  for (const [term, df] of first.dfs) known.set(term, df);
  let added = false;
  for (const term of await respellings(db, namespace, query.respell, known)) {
    if (!weights.has(term)) {
      weights.set(term, RESPELLED_WEIGHT);
      added = true;
    }
  }
  return added
    ? (await scored(db, namespace, weights, query.limit)).hits
    : first.hits;
}

/** The best `limit` entries for the weighted terms, and each found term's document frequency. */
async function scored(
  db: Db,
  namespace: string,
  weights: Map<string, number>,
  limit: number,
): Promise<{ hits: RankedKey[]; dfs: Map<string, number> }> {
  const terms = [...weights.keys()];
  if (!terms.length) return { hits: [], dfs: new Map() };
  const tsquery = terms.map(quoteLexeme).join(" | ");
  // Lucene's idf, as the built-in index: a term in most entries still counts
  // a little. Schema 1 rows a daemon of that version still writes (no length,
  // not in the totals) count as of average length.
  const rows = await db`WITH stats AS (
      SELECT greatest(coalesce(sum(entries), 0), 1)::float8 AS n,
        CASE WHEN coalesce(sum(length), 0) > 0 AND coalesce(sum(entries), 0) > 0
          THEN sum(length)::float8 / sum(entries) ELSE 1 END AS avg
      FROM ${db(T.stats)} WHERE namespace = ${namespace}
    ), hits AS MATERIALIZED (
      SELECT e.key, e.search_length::float8 AS length, u.lexeme AS term,
        cardinality(u.positions)::float8 AS tf
      FROM ${db(T.entries)} e CROSS JOIN LATERAL unnest(e.search) u
      WHERE e.namespace = ${namespace} AND e.search @@ ${tsquery}::tsquery
        AND u.lexeme = ANY(${terms}::text[])
    ), df AS (
      SELECT term, count(*)::float8 AS df FROM hits GROUP BY term
    ), idf AS (
      SELECT df.term, df.df, w.weight * ln(1 + (greatest(s.n, df.df) - df.df + 0.5)
        / (df.df + 0.5)) AS idf
      FROM df JOIN unnest(${terms}::text[], ${[...weights.values()]}::float8[])
        AS w(term, weight) ON w.term = df.term, stats s
    ), ranked AS (
      SELECT h.key, sum(i.idf * h.tf * ${K1 + 1}::float8 / (h.tf + ${K1}::float8
        * (1 - ${B}::float8 + ${B}::float8 * coalesce(h.length, s.avg) / s.avg)))
        AS score
      FROM hits h JOIN idf i ON i.term = h.term, stats s
      GROUP BY h.key ORDER BY score DESC, h.key LIMIT ${limit}
    )
    SELECT key, score::float8 AS score,
      (SELECT json_object_agg(term, df) FROM idf) AS dfs
    FROM ranked ORDER BY score DESC, key`;
  const hits: RankedKey[] = [];
  let dfs = new Map<string, number>();
  for (const raw of rows) {
    const row = ScoredRow.parse(raw);
    hits.push({ key: row.key, score: row.score });
    dfs = new Map(Object.entries(row.dfs ?? {}));
  }
  return { hits, dfs };
}

/** How many of the namespace's entries hold each term (terms none holds are 0). */
async function documentFrequencies(
  db: Db,
  namespace: string,
  terms: string[],
): Promise<Map<string, number>> {
  const found = new Map(terms.map((term) => [term, 0]));
  if (!terms.length) return found;
  // Most respelling candidates are no term: the dictionary's btree rules
  // them out, and only the terms it holds are counted through the GIN index.
  const rows = await db`SELECT t.term, (SELECT count(*) FROM ${db(T.entries)} e
      WHERE e.namespace = ${namespace} AND e.search @@ t.query::tsquery)::int AS df
    FROM unnest(${terms}::text[], ${
    terms.map(quoteLexeme)
  }::text[]) AS t(term, query)
    WHERE EXISTS (SELECT 1 FROM ${db(T.terms)} d
      WHERE d.namespace = ${namespace} AND d.term = t.term)`;
  for (const row of rows) {
    const { term, df } = TermDfRow.parse(row);
    found.set(term, df);
  }
  return found;
}

/**
 * The query's respellings (search_respell.ts), whose `df` callback is
 * synchronous: each round answers from what is known, notes what it did not
 * know, and the next round looks those up in one query. A query whose words
 * all have entries asks nothing new and costs no round trip.
 */
async function respellings(
  db: Db,
  namespace: string,
  respell: NonNullable<SearchQuery["respell"]>,
  known: Map<string, number>,
): Promise<string[]> {
  let terms: string[] = [];
  for (let round = 0; round < RESPELL_ROUNDS; round++) {
    const unknown = new Set<string>();
    terms = respell((term) => {
      const df = known.get(term);
      if (df === undefined) unknown.add(term);
      return df ?? 0;
    });
    if (!unknown.size) return terms;
    const found = await documentFrequencies(db, namespace, [...unknown]);
    for (const [term, df] of found) known.set(term, df);
  }
  return terms;
}

/** Cosine ranks: by pgvector in the server, else computed here over the rows. */
export async function vectorRanks(
  db: Db,
  namespace: string,
  query: SearchQuery,
  vectors: VectorMode,
): Promise<RankedKey[]> {
  const vector = query.vector;
  if (!vector || vector.length === 0 || query.limit < 1) return [];
  const embedder = query.embedder ?? null;
  if (vectors === "pgvector") {
    const q = db`${vectorLiteral(vector)}::real[]::vector`;
    const rows =
      await db`SELECT key, (1 - (embedding <=> ${q}))::float8 AS score
      FROM ${db(T.entries)}
      WHERE namespace = ${namespace} AND NOT sensitive AND embedding IS NOT NULL
        AND (${embedder}::text IS NULL OR embedder = ${embedder})
        AND vector_dims(embedding) = ${vector.length}
      ORDER BY embedding <=> ${q}, key LIMIT ${query.limit}`;
    return rows.map((row) => KeyScoreRow.parse(row));
  }
  const entries = db(T.entries);
  const rows = await db`SELECT key, embedding::real[] AS embedding
    FROM ${entries} WHERE namespace = ${namespace} AND NOT sensitive AND embedding IS NOT NULL
      AND (${embedder}::text IS NULL OR embedder = ${embedder})
      AND cardinality(embedding) = ${vector.length}`;
  const hits = rows.map((raw) => {
    const row = KeyVectorRow.parse(raw);
    return { key: row.key, score: cosine(vector, row.embedding) };
  });
  hits.sort((a, b) => b.score - a.score || (a.key < b.key ? -1 : 1));
  return hits.slice(0, query.limit);
}

function cosine(a: Float32Array, b: number[]): number {
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
