// PgBackend's lexical document: the built-in index's terms (search_tokens.ts:
// stems, stop words, names, numbers, speaker terms) stored as a tsvector whose
// positions only count the term (tf), plus the entry's term count and the
// per-namespace totals BM25 needs; and the batched recompute of rows an older
// schema indexed differently.

import type postgres from "postgres";
import { z } from "zod";
import type { StoredEntry } from "../model.ts";
import { indexText, tokenize } from "../search_tokens.ts";
import { type Guard, guarded, TABLES as T } from "./pg_schema.ts";

/** Values beyond this many characters are not full-text indexed (a tsvector is capped at 1 MB). */
export const INDEXED_VALUE_CHARS = 256 * 1024;
/** A tsvector keeps at most 256 positions per lexeme: tf is capped there (BM25 saturates long before). */
const MAX_TF = 256;
/** A tsvector (lexemes and positions) takes less than 1 MB: terms past this many bytes are left out. */
const MAX_TSVECTOR_BYTES = 1_000_000;
/**
 * Per-namespace totals are split over this many rows (by key), so concurrent
 * writers of one namespace seldom wait on the same counter row.
 */
export const STAT_SHARDS = 16;
/** Rows recomputed per transaction by `reindexOldRows`. */
const REINDEX_BATCH = 500;
const ASCII_RE = /^[\0-\x7f]*$/;

export interface SearchDoc {
  /** A tsvector literal: each term once, with positions 1..tf. */
  vector: string;
  /** Number of terms (the built-in index's document length). */
  length: number;
  /** The distinct terms the vector holds. */
  terms: string[];
}

/**
 * What the built-in index sees (`indexText`: key, value unless sensitive,
 * tags, all weighted alike), tokenized by the same code.
 */
export function searchDoc(entry: StoredEntry): SearchDoc {
  const indexed = entry.value.length > INDEXED_VALUE_CHARS
    ? { ...entry, value: entry.value.slice(0, INDEXED_VALUE_CHARS) }
    : entry;
  const tokens = tokenize(indexText(indexed));
  const tf = new Map<string, number>();
  for (const token of tokens) tf.set(token, (tf.get(token) ?? 0) + 1);
  const parts: string[] = [];
  const terms: string[] = [];
  const utf8 = new TextEncoder();
  let bytes = 0;
  for (const [term, count] of tf) {
    // Only a huge CJK value (bigrams) comes near it; its first terms are kept.
    const positions = Array.from(
      { length: Math.min(count, MAX_TF) },
      (_, i) => i + 1,
    );
    // The lexeme, its positions (2 bytes each), their count and alignment.
    bytes += (ASCII_RE.test(term) ? term.length : utf8.encode(term).length) +
      2 * positions.length + 4;
    if (bytes >= MAX_TSVECTOR_BYTES) break;
    parts.push(`${quoteLexeme(term)}:${positions.join(",")}`);
    terms.push(term);
  }
  return { vector: parts.join(" "), length: tokens.length, terms };
}

/** A term as a tsvector/tsquery lexeme literal (taken as is: no parser, no normalisation). */
export function quoteLexeme(term: string): string {
  return `'${term.replace(/['\\]/g, (c) => "\\" + c)}'`;
}

/** The totals row a key's length counts in (FNV-1a of the key). */
export function statShard(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  }
  return (hash >>> 0) % STAT_SHARDS;
}

/**
 * Adds to a namespace's totals. Rows are locked in (shard) order, so
 * concurrent callers cannot deadlock on them.
 */
export async function addStats(
  db: postgres.ISql,
  namespace: string,
  deltas: { shard: number; entries: number; length: number }[],
): Promise<void> {
  const rows = deltas.filter((d) => d.entries !== 0 || d.length !== 0)
    .sort((a, b) => a.shard - b.shard);
  if (!rows.length) return;
  const stats = db(T.stats);
  await db`INSERT INTO ${stats} (namespace, shard, entries, length)
    SELECT ${namespace}, s, e, l FROM unnest(${rows.map((r) => r.shard)}::int[],
      ${rows.map((r) => r.entries)}::bigint[], ${
    rows.map((r) => r.length)
  }::bigint[]) AS d(s, e, l)
    ORDER BY s
    ON CONFLICT (namespace, shard) DO UPDATE
    SET entries = ${stats}.entries + excluded.entries,
      length = ${stats}.length + excluded.length`;
}

/**
 * Records the namespace's terms (respelling's dictionary). In sorted order,
 * so writers adding the same new terms cannot deadlock; a term already there
 * is neither locked nor rewritten.
 */
export function termsInsert(
  db: postgres.ISql,
  namespace: string,
  terms: string[],
): postgres.PendingQuery<postgres.Row[]> {
  return db`INSERT INTO ${db(T.terms)} (namespace, term)
    SELECT ${namespace}, t FROM unnest(${terms}::text[]) AS t ORDER BY t COLLATE "C"
    ON CONFLICT (namespace, term) DO NOTHING`;
}

/** `termsInsert` on its own. */
export async function addTerms(
  db: postgres.ISql,
  namespace: string,
  terms: string[],
): Promise<void> {
  if (terms.length) await termsInsert(db, namespace, terms);
}

const OldRow = z.object({
  namespace: z.string(),
  key: z.string(),
  value: z.string(),
  tags: z.array(z.string()),
  sensitive: z.boolean(),
});

/**
 * Recomputes the rows an older schema indexed, one guarded batch at a time
 * (a large table outlasts one deadline); returns how many.
 */
export async function reindexOldRows(
  sql: postgres.Sql,
  guard: Guard,
): Promise<number> {
  let reindexed = 0;
  for (;;) {
    const done = await guarded(guard, "reindex", () => reindexBatch(sql));
    if (done === 0) return reindexed;
    reindexed += done;
  }
}

/**
 * Recomputes one batch of rows an older schema indexed (search_length NULL)
 * and counts them in the totals; returns how many it did (0: none left).
 * SKIP LOCKED lets several daemons share the work, and passes over rows a
 * writer holds (its write indexes them anew).
 */
async function reindexBatch(sql: postgres.Sql): Promise<number> {
  return await sql.begin(async (tx) => {
    const raw = await tx`SELECT namespace, key, value, tags, sensitive
      FROM ${tx(T.entries)} WHERE search_length IS NULL
      ORDER BY namespace, key LIMIT ${REINDEX_BATCH} FOR UPDATE SKIP LOCKED`;
    if (!raw.length) return 0;
    const rows = raw.map((r) => OldRow.parse(r));
    const docs = rows.map((row) =>
      searchDoc({
        ...row,
        created_at: "",
        updated_at: "",
        embedding: null,
      })
    );
    await tx`UPDATE ${tx(T.entries)} e
      SET search = d.search::tsvector, search_length = d.length
      FROM unnest(${rows.map((r) => r.namespace)}::text[], ${
      rows.map((r) => r.key)
    }::text[],
        ${docs.map((d) => d.vector)}::text[], ${
      docs.map((d) => d.length)
    }::int[]) AS d(namespace, key, search, length)
      WHERE e.namespace = d.namespace AND e.key = d.key`;
    const byNamespace = new Map<string, Map<number, number[]>>();
    rows.forEach((row, i) => {
      const shards = byNamespace.get(row.namespace) ?? new Map();
      byNamespace.set(row.namespace, shards);
      const shard = statShard(row.key);
      const [entries, length] = shards.get(shard) ?? [0, 0];
      shards.set(shard, [entries + 1, length + docs[i].length]);
    });
    // Namespaces in byte order (as the batch was read), shards sorted in addStats.
    for (const [namespace, shards] of byNamespace) {
      const terms = new Set<string>();
      rows.forEach((row, i) => {
        if (row.namespace === namespace) {
          for (const term of docs[i].terms) terms.add(term);
        }
      });
      await addTerms(tx, namespace, [...terms]);
      await addStats(
        tx,
        namespace,
        [...shards].map(([shard, [entries, length]]) => ({
          shard,
          entries,
          length,
        })),
      );
    }
    return rows.length;
  });
}
