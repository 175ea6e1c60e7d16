// The search queries of PgBackend (pg.ts): lexical ranks by BM25 over the
// built-in index's terms (pg_terms.ts), and vector ranks by pgvector or, without it, by cosine
// over the rows here. Apart from pg.ts, which owns the pool and the writes.

import type postgres from "postgres";
import { z } from "zod";
import type { RankedKey, SearchQuery } from "../model.ts";
import { TABLES as T, vectorLiteral, type VectorMode } from "./pg_schema.ts";
import { quoteLexeme } from "./pg_terms.ts";

type Db = postgres.ISql;

const KeyScoreRow = z.object({ key: z.string(), score: z.number() });
const StatsRow = z.object({ n: z.number(), total: z.number() });
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
 * BM25 ranks, scored as the built-in index scores them: the GIN index finds
 * the entries holding any term, document frequencies are counted over the
 * namespace's rows, the totals come from the stats rows. Run in one
 * snapshot (see PgBackend.search) so they all agree.
 */
export async function lexicalRanks(
  db: Db,
  namespace: string,
  query: SearchQuery,
): Promise<RankedKey[]> {
  if (query.limit < 1) return [];
  const [stats] = await db`SELECT coalesce(sum(entries), 0)::float8 AS n,
      coalesce(sum(length), 0)::float8 AS total
    FROM ${db(T.stats)} WHERE namespace = ${namespace}`;
  const { n, total } = StatsRow.parse(stats);
  if (n <= 0) return [];
  const known = await documentFrequencies(db, namespace, [
    ...new Set(query.terms),
  ]);
  const weights = new Map<string, number>();
  for (const term of query.terms) weights.set(term, 1);
  for (const term of await respellings(db, namespace, query, known)) {
    if (!weights.has(term)) weights.set(term, RESPELLED_WEIGHT);
  }
  // A respelling's speaker term ("@festiv") was not asked about.
  const unasked = [...weights.keys()].filter((term) => !known.has(term));
  const more = await documentFrequencies(db, namespace, unasked);
  for (const [term, df] of more) known.set(term, df);
  const terms: string[] = [];
  const idfs: number[] = [];
  for (const [term, weight] of weights) {
    const df = known.get(term) ?? 0;
    if (df === 0) continue;
    terms.push(term);
    // Lucene's idf, as the built-in index: a term in most entries still counts a little.
    idfs.push(weight * Math.log(1 + (n - df + 0.5) / (df + 0.5)));
  }
  if (!terms.length) return [];
  const avg = total / n || 1;
  const tsquery = terms.map(quoteLexeme).join(" | ");
  // Schema 1 rows a daemon of that version still writes (no length) count as average.
  const rows = await db`SELECT e.key, sum(
        t.idf * u.tf * ${
    K1 + 1
  }::float8 / (u.tf + ${K1}::float8 * (1 - ${B}::float8
          + ${B}::float8 * coalesce(e.search_length, ${avg}::float8) / ${avg}::float8))
      )::float8 AS score
    FROM ${db(T.entries)} e
      CROSS JOIN LATERAL (SELECT lexeme, cardinality(positions) AS tf
        FROM unnest(e.search)) u
      JOIN unnest(${terms}::text[], ${idfs}::float8[]) AS t(term, idf)
        ON t.term = u.lexeme
    WHERE e.namespace = ${namespace} AND e.search @@ ${tsquery}::tsquery
    GROUP BY e.key ORDER BY score DESC, e.key LIMIT ${query.limit}`;
  return rows.map((row) => KeyScoreRow.parse(row));
}

/** How many of the namespace's entries hold each term (terms none holds are 0). */
async function documentFrequencies(
  db: Db,
  namespace: string,
  terms: string[],
): Promise<Map<string, number>> {
  const found = new Map(terms.map((term) => [term, 0]));
  if (!terms.length) return found;
  const rows = await db`SELECT t.term, (SELECT count(*) FROM ${db(T.entries)} e
      WHERE e.namespace = ${namespace} AND e.search @@ t.query::tsquery)::int AS df
    FROM unnest(${terms}::text[], ${
    terms.map(quoteLexeme)
  }::text[]) AS t(term, query)`;
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
  query: SearchQuery,
  known: Map<string, number>,
): Promise<string[]> {
  const respell = query.respell;
  if (!respell) return [];
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
