// PgBackend's schema: the migration (idempotent, under an advisory lock so
// that several daemons starting at once do not race on CREATE TABLE), the
// row codecs, and the error handling, kept apart from the query code.
//
// Tables (in the current schema, `agentd_memory_` prefix):
//   agentd_memory_meta      name → value (schema_version)
//   agentd_memory_entries   (namespace, key) PK, both COLLATE "C" (byte
//                           order, like the KV backend); tags text[] (GIN);
//                           search tsvector (GIN), weighted key A, tags B,
//                           value D, empty value for sensitive entries;
//                           embedder + embedding (pgvector `vector` when the
//                           extension can be enabled, else real[])
//   agentd_memory_sessions  (namespace, session_id) PK; message_count, whose
//                           row lock orders concurrent appends
//   agentd_memory_messages  (namespace, session_id, seq) PK; extra jsonb

import { redactSecret } from "../../../platform/store/pg_url.ts";
import postgres from "postgres";
import { z } from "zod";
import { EntryNotFound } from "./port.ts";
import { BackendUnavailable } from "./port.ts";
import type { StoredEntry } from "../model.ts";
import { tokenize } from "../search_index.ts";
import { messageOf } from "../../../platform/errors.ts";

export const TABLES = {
  meta: "agentd_memory_meta",
  entries: "agentd_memory_entries",
  sessions: "agentd_memory_sessions",
  messages: "agentd_memory_messages",
};

export const SCHEMA_VERSION = 1;
/** Values beyond this many characters are not full-text indexed (a tsvector is capped at 1 MB). */
export const INDEXED_VALUE_CHARS = 256 * 1024;
/** pg_advisory_xact_lock id: "agentd" in ASCII. */
const MIGRATION_LOCK = 0x616765_6e7464;

export type VectorMode = "pgvector" | "in-process";

export interface SchemaInfo {
  vectors: VectorMode;
  /** For health(): how vectors are ranked and why. */
  note: string;
}

const VersionRow = z.object({ value: z.string() });
const TypeRow = z.object({ type: z.string().nullable() });

/** Creates or upgrades the tables; tells how vector search will run. */
export async function migrate(sql: postgres.Sql): Promise<SchemaInfo> {
  return await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK}::bigint)`;
    const vector = await enableVector(tx);
    const t = TABLES;
    await tx.unsafe(`CREATE TABLE IF NOT EXISTS ${t.meta} (
      name text PRIMARY KEY, value text NOT NULL)`);
    const version = await tx`SELECT value FROM ${
      tx(t.meta)
    } WHERE name = 'schema_version'`;
    const found = version.length
      ? Number(VersionRow.parse(version[0]).value)
      : 0;
    if (found > SCHEMA_VERSION) {
      throw new Error(
        `The memory tables were created by a newer agentd (schema ${found}, this one knows ` +
          `${SCHEMA_VERSION}); upgrade agentd`,
      );
    }
    await tx.unsafe(`CREATE TABLE IF NOT EXISTS ${t.entries} (
      namespace text COLLATE "C" NOT NULL,
      key text COLLATE "C" NOT NULL,
      value text NOT NULL,
      tags text[] NOT NULL DEFAULT '{}',
      sensitive boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      embedder text,
      embedding ${vector.ok ? "vector" : "real[]"},
      search tsvector NOT NULL DEFAULT ''::tsvector,
      PRIMARY KEY (namespace, key))`);
    await tx.unsafe(
      `CREATE INDEX IF NOT EXISTS ${t.entries}_tags ON ${t.entries} USING gin (tags)`,
    );
    await tx.unsafe(
      `CREATE INDEX IF NOT EXISTS ${t.entries}_search ON ${t.entries} USING gin (search)`,
    );
    await tx.unsafe(`CREATE TABLE IF NOT EXISTS ${t.sessions} (
      namespace text COLLATE "C" NOT NULL,
      session_id text COLLATE "C" NOT NULL,
      message_count bigint NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (namespace, session_id))`);
    await tx.unsafe(`CREATE TABLE IF NOT EXISTS ${t.messages} (
      namespace text COLLATE "C" NOT NULL,
      session_id text COLLATE "C" NOT NULL,
      seq bigint NOT NULL,
      role text NOT NULL,
      content text NOT NULL,
      at timestamptz NOT NULL,
      extra jsonb,
      PRIMARY KEY (namespace, session_id, seq))`);
    await tx`INSERT INTO ${
      tx(t.meta)
    } (name, value) VALUES ('schema_version', ${
      String(SCHEMA_VERSION)
    }) ON CONFLICT (name) DO NOTHING`;

    // Tables made before pgvector was available keep real[] until it is.
    const column =
      await tx`SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute
      WHERE attrelid = ${t.entries}::regclass AND attname = 'embedding'`;
    let type = TypeRow.parse(column[0]).type;
    if (type === "real[]" && vector.ok) {
      await tx.unsafe(
        `ALTER TABLE ${t.entries} ALTER COLUMN embedding TYPE vector
        USING embedding::vector`,
      );
      type = "vector";
    }
    if (type === "vector") {
      return {
        vectors: "pgvector",
        note: "vector search: pgvector (<=> in the server)",
      };
    }
    return {
      vectors: "in-process",
      note: `vector search: cosine in process over real[] (${vector.reason})`,
    };
  });
}

async function enableVector(
  tx: postgres.TransactionSql,
): Promise<{ ok: boolean; reason: string }> {
  if ((await tx`SELECT 1 FROM pg_extension WHERE extname = 'vector'`).length) {
    return { ok: true, reason: "" };
  }
  if (
    !(await tx`SELECT 1 FROM pg_available_extensions WHERE name = 'vector'`)
      .length
  ) {
    return { ok: false, reason: "pgvector is not installed on the server" };
  }
  try {
    // A savepoint keeps a refused CREATE EXTENSION from aborting the migration.
    await tx.savepoint((sp) => sp`CREATE EXTENSION IF NOT EXISTS vector`);
    return { ok: true, reason: "" };
  } catch (error) {
    const reason = messageOf(error);
    return { ok: false, reason: `CREATE EXTENSION vector failed: ${reason}` };
  }
}

// ---- errors --------------------------------------------------------------

// Node-style socket error codes and postgres.js's own connection codes.
const NETWORK_CODES: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  ECONNABORTED: "connection aborted",
  EPIPE: "connection lost",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host name lookup failed",
  CONNECT_TIMEOUT: "no answer within the connect timeout",
  CONNECTION_CLOSED: "connection closed",
  CONNECTION_DESTROYED: "connection closed",
  CONNECTION_ENDED: "connection ended",
};

/**
 * SQLSTATE classes that mean "the server cannot serve us now", not "this
 * operation is wrong": connection exceptions, insufficient resources,
 * operator intervention (shutdown, statement timeout), rejected login,
 * missing database, transaction rollback (deadlock, serialization).
 */
const UNAVAILABLE_CLASSES = new Set(["08", "53", "57", "28", "3D", "40"]);

/** Says what failed; `unavailable` when it is about reaching the server. */
export function describePgError(
  error: unknown,
  op: string,
  url: string,
): { unavailable: boolean; message: string } {
  if (error instanceof postgres.PostgresError) {
    const state = error.code;
    if (state.startsWith("28")) {
      return {
        unavailable: true,
        message: `PostgreSQL at ${url} rejected the login: ${error.message}; ` +
          "check the user in the URL and the memory backend key (password)",
      };
    }
    if (state === "3D000") {
      return {
        unavailable: true,
        message:
          `Cannot use PostgreSQL at ${url}: ${error.message}; create it or fix the URL`,
      };
    }
    if (UNAVAILABLE_CLASSES.has(state.slice(0, 2)) || state === "25006") {
      return {
        unavailable: true,
        message:
          `Cannot reach PostgreSQL at ${url}: ${error.message} (SQLSTATE ${state})`,
      };
    }
    return {
      unavailable: false,
      message:
        `PostgreSQL ${op} failed at ${url}: ${error.message} (SQLSTATE ${state})`,
    };
  }
  const code = errorCode(error);
  const text = messageOf(error);
  if (code !== null && (code in NETWORK_CODES || hasSyscall(error))) {
    return {
      unavailable: true,
      message: `Cannot reach PostgreSQL at ${url}: ${
        NETWORK_CODES[code] ?? text
      }`,
    };
  }
  return {
    unavailable: false,
    message: `PostgreSQL ${op} failed at ${url}: ${text}`,
  };
}

function errorCode(error: unknown): string | null {
  if (typeof error !== "object" || error === null || !("code" in error)) {
    return null;
  }
  return typeof error.code === "string" ? error.code : null;
}

function hasSyscall(error: unknown): boolean {
  return typeof error === "object" && error !== null && "syscall" in error;
}

export interface Guard {
  /** Without password. */
  url: string;
  secret: string;
  deadlineMs: number;
  /** Called when an operation misses its deadline. */
  onDeadline?: () => void;
}

/** Runs one operation with a client-side deadline, mapping errors to clear ones. */
export async function guarded<R>(
  guard: Guard,
  op: string,
  fn: () => Promise<R>,
): Promise<R> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const work = fn();
  // If the deadline wins, the query may still fail later; nobody awaits it.
  work.catch(() => {});
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      guard.onDeadline?.();
      const seconds = guard.deadlineMs / 1000;
      reject(
        new BackendUnavailable(
          `Cannot reach PostgreSQL at ${guard.url}: no answer within ${seconds} s`,
        ),
      );
    }, guard.deadlineMs);
  });
  try {
    return await Promise.race([work, deadline]);
  } catch (error) {
    if (error instanceof EntryNotFound || error instanceof BackendUnavailable) {
      throw error;
    }
    if (error instanceof RangeError) throw error;
    const { unavailable, message } = describePgError(error, op, guard.url);
    const text = redactSecret(message, guard.secret);
    throw unavailable
      ? new BackendUnavailable(text)
      : new Error(text, { cause: error });
  } finally {
    clearTimeout(timer);
  }
}

// ---- rows ----------------------------------------------------------------

const EntryRow = z.object({
  namespace: z.string(),
  key: z.string(),
  value: z.string(),
  tags: z.array(z.string()),
  sensitive: z.boolean(),
  created_at: z.date(),
  updated_at: z.date(),
  embedder: z.string().nullable(),
  embedding: z.array(z.number()).nullable(),
});
export const MessageRow = z.object({
  role: z.string(),
  content: z.string(),
  at: z.date(),
  extra: z.record(z.string(), z.unknown()).nullable(),
});
/**
 * The lexical document, pre-tokenized by the service's tokenizer (stems,
 * stopwords, CJK bigrams) so that SearchQuery.terms, which come from the same
 * tokenizer, match; the 'simple' parser then only splits on the spaces.
 * Sensitive values are ciphertext and never indexed.
 */
export function searchDoc(
  entry: StoredEntry,
): { key: string; tags: string; value: string } {
  const value = entry.sensitive
    ? ""
    : entry.value.slice(0, INDEXED_VALUE_CHARS);
  return {
    key: tokenize(entry.key).join(" "),
    tags: tokenize(entry.tags.join("\n")).join(" "),
    value: tokenize(value).join(" "),
  };
}

export function toEntry(raw: unknown): StoredEntry {
  const row = EntryRow.parse(raw);
  return {
    namespace: row.namespace,
    key: row.key,
    value: row.value,
    tags: row.tags,
    sensitive: row.sensitive,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    embedding: row.embedder !== null && row.embedding !== null
      ? { embedder: row.embedder, vector: Float32Array.from(row.embedding) }
      : null,
  };
}

/** A real[] literal; String() of a float32 value parses back to the same float32. */
export function vectorLiteral(vector: Float32Array | undefined): string | null {
  return vector ? `{${Array.from(vector, String).join(",")}}` : null;
}

/** PostgreSQL text cannot hold U+0000; say so instead of an encoding error. */
export function checkNul(what: string, texts: string[]): void {
  if (texts.some((t) => t.includes("\u0000"))) {
    throw new Error(
      `${what} contains a NUL character (\\u0000), which PostgreSQL cannot store; remove it`,
    );
  }
}

export function encodeCursor(key: string): string {
  const bytes = new TextEncoder().encode(key);
  return "k1." +
    btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll(
      "/",
      "_",
    );
}

export function decodeCursor(cursor: string): string {
  try {
    if (!cursor.startsWith("k1.")) throw new Error("unknown format");
    const binary = atob(
      cursor.slice(3).replaceAll("-", "+").replaceAll("_", "/"),
    );
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new RangeError(
      "Invalid list cursor: pass back the cursor of the previous page",
    );
  }
}
