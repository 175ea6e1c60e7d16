// The search queries of PgBackend (pg.ts): lexical ranks from PostgreSQL's
// full-text search, and vector ranks by pgvector or, without it, by cosine
// over the rows here. Apart from pg.ts, which owns the pool and the writes.

import type postgres from "postgres";
import { z } from "zod";
import type { RankedKey, SearchQuery } from "../model.ts";
import { TABLES as T, vectorLiteral, type VectorMode } from "./pg_schema.ts";

type Db = postgres.ISql;

const KeyScoreRow = z.object({ key: z.string(), score: z.number() });
const KeyVectorRow = z.object({
  key: z.string(),
  embedding: z.array(z.number()),
});

/** Full-text ranks (ts_rank_cd) of the entries matching any of the terms. */
export async function lexicalRanks(
  db: Db,
  namespace: string,
  query: SearchQuery,
): Promise<RankedKey[]> {
  if (query.terms.length === 0 || query.limit < 1) return [];
  // Each term goes through the same 'simple' parser as the documents
  // (plainto_tsquery), and the terms are ORed.
  const rows = await db`WITH q AS (
      SELECT string_agg('(' || plainto_tsquery('simple', t)::text || ')', ' | ')::tsquery AS query
      FROM unnest(${query.terms}::text[]) AS t
      WHERE plainto_tsquery('simple', t)::text <> ''
    )
    SELECT e.key, ts_rank_cd(e.search, q.query)::float8 AS score
    FROM ${db(T.entries)} e, q
    WHERE q.query IS NOT NULL AND e.namespace = ${namespace} AND e.search @@ q.query
    ORDER BY score DESC, e.key LIMIT ${query.limit}`;
  return rows.map((row) => KeyScoreRow.parse(row));
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
