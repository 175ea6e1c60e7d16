// PgBackend: the memory store on PostgreSQL (porsager's `postgres` client).
// The tables are described and created in pg_schema.ts. Every
// failure to reach the server is thrown as BackendUnavailable (HostedBackend
// queues on it); the password never appears in messages.

import postgres from "postgres";
import { z } from "zod";
import type { Logger } from "../../../platform/log.ts";
import { openPgPool } from "../../../platform/store/pg_pool.ts";
import { checkPgUrl, passwordIn } from "../../../platform/store/pg_url.ts";
import { EntryNotFound, type ListQuery, type MemoryBackend } from "./port.ts";
import {
  checkNul,
  decodeCursor,
  encodeCursor,
  type Guard,
  guarded,
  MessageRow,
  migrate,
  type SchemaInfo,
  searchDoc,
  TABLES as T,
  toEntry,
  vectorLiteral,
} from "./pg_schema.ts";
import type * as model from "../model.ts";
import { messageOf } from "../../../platform/errors.ts";
import { lexicalRanks, vectorRanks } from "./pg_search.ts";

type Sql = postgres.Sql;
type Db = postgres.ISql;

export interface PgConnectOptions {
  /** `postgres://user@host:port/database`; a password in it is used when `key` is absent. */
  url: string;
  /** The password (or token); kept out of logs and error messages. */
  key?: string;
  log: Logger;
  /** Connecting gives up after this long (default 5000). */
  connectTimeoutMs?: number;
  /** Server-side statement and lock timeout (default 5000). */
  statementTimeoutMs?: number;
  /** Pool size (default 4). */
  maxConnections?: number;
}

const CountRow = z.object({ namespace: z.string(), count: z.number() });
const TotalRow = z.object({ total: z.number() });
const SessionRow = z.object({ session_id: z.string() });

export class PgBackend implements MemoryBackend {
  readonly kind = "postgres";
  #sql: Sql;
  readonly #newPool: () => Sql;
  /** Pools dropped after a missed deadline, still shutting down. */
  readonly #ending = new Set<Promise<void>>();
  readonly #guard: Guard;
  readonly #schema: SchemaInfo;
  #closed = false;

  private constructor(
    newPool: () => Sql,
    sql: Sql,
    guard: Guard,
    schema: SchemaInfo,
  ) {
    this.#newPool = newPool;
    this.#sql = sql;
    this.#guard = { ...guard, onDeadline: () => this.#dropPool() };
    this.#schema = schema;
  }

  /** Connects, creates or upgrades the tables, and checks the server answers. */
  static async connect(options: PgConnectOptions): Promise<PgBackend> {
    const url = checkPgUrl(options.url);
    const secret = options.key ?? passwordIn(options.url);
    if (secret) options.log.addSecret(secret);
    const connectMs = options.connectTimeoutMs ?? 5000;
    const statementMs = options.statementTimeoutMs ?? 5000;
    // The daemon's one PostgreSQL opener (pool, timeouts, prompt reconnects);
    // the hosted backend paces its own probes on top.
    const newPool = () =>
      openPgPool({
        url: options.url,
        password: options.key,
        maxConnections: options.maxConnections ?? 4,
        connectTimeoutMs: connectMs,
        statementTimeoutMs: statementMs,
        applicationName: "agentd-memory",
      });
    const sql = newPool();
    // Client-side bound for one operation: a hung server (accepting TCP but
    // not answering) is noticed by neither timeout above.
    const guard = { url, secret, deadlineMs: connectMs + statementMs };
    let schema: SchemaInfo;
    try {
      schema = await guarded(guard, "migrate", () => migrate(sql));
    } catch (error) {
      await sql.end({ timeout: 0 }).catch(() => {});
      throw error;
    }
    options.log.info("memory_pg_connected", {
      url,
      vectors: schema.vectors,
      detail: schema.note,
    });
    return new PgBackend(newPool, sql, guard, schema);
  }

  get(namespace: string, key: string): Promise<model.StoredEntry | null> {
    return this.#run("get", async (db) => {
      const rows = await db`SELECT ${cols(db)} FROM ${db(T.entries)}
        WHERE namespace = ${namespace} AND key = ${key}`;
      return rows.length ? toEntry(rows[0]) : null;
    });
  }

  async put(
    entry: model.StoredEntry,
    mode: "upsert" | "update",
  ): Promise<model.StoredEntry | null> {
    checkNul(`Entry "${entry.key}"`, [
      entry.namespace,
      entry.key,
      entry.value,
      ...entry.tags,
    ]);
    const doc = searchDoc(entry);
    const vector = vectorLiteral(entry.embedding?.vector);
    return await this.#run("put", () =>
      this.#sql.begin(async (tx) => {
        const where = tx`namespace = ${entry.namespace} AND key = ${entry.key}`;
        // SELECT ... FOR UPDATE locks an existing row. A new key gets a
        // placeholder row first; if a racing writer inserted it after our
        // SELECT, the next round locks and replaces theirs.
        for (let round = 0; round < 5; round++) {
          const old = await tx`SELECT ${cols(tx)} FROM ${tx(T.entries)}
            WHERE ${where} FOR UPDATE`;
          if (!old.length) {
            if (mode === "update") {
              throw new EntryNotFound(entry.namespace, entry.key);
            }
            const inserted = await tx`INSERT INTO ${tx(T.entries)}
              (namespace, key, value, created_at, updated_at)
              VALUES (${entry.namespace}, ${entry.key}, '', now(), now())
              ON CONFLICT (namespace, key) DO NOTHING RETURNING 1`;
            if (!inserted.length) continue;
          }
          await tx`UPDATE ${tx(T.entries)} SET value = ${entry.value},
            tags = ${entry.tags}::text[], sensitive = ${entry.sensitive},
            created_at = ${entry.created_at}::timestamptz,
            updated_at = ${entry.updated_at}::timestamptz,
            embedder = ${entry.embedding?.embedder ?? null},
            embedding = ${vector}::real[],
            search = setweight(to_tsvector('simple', ${doc.key}), 'A') ||
              setweight(to_tsvector('simple', ${doc.tags}), 'B') ||
              to_tsvector('simple', ${doc.value})
            WHERE ${where}`;
          return old.length ? toEntry(old[0]) : null;
        }
        throw new Error(
          `Entry "${entry.key}" kept changing under concurrent writers; retry`,
        );
      }));
  }

  delete(namespace: string, key: string): Promise<boolean> {
    // In a transaction, so a DELETE held up in a network partition is never
    // sent (it waits for BEGIN's reply) and cannot run after recovery.
    return this.#run("delete", () =>
      this.#sql.begin(async (tx) => {
        const rows = await tx`DELETE FROM ${tx(T.entries)}
          WHERE namespace = ${namespace} AND key = ${key} RETURNING 1`;
        return rows.length > 0;
      }));
  }

  async list(namespace: string, query: ListQuery): Promise<model.EntryPage> {
    const limit = query.limit;
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
      throw new RangeError(
        `List limit must be an integer from 1 to 1000, got ${limit}`,
      );
    }
    const after = query.cursor ? decodeCursor(query.cursor) : null;
    return await this.#run("list", async (db) => {
      const rows = await db`SELECT ${cols(db)} FROM ${db(T.entries)}
        WHERE namespace = ${namespace} AND tags @> ${query.tags ?? []}::text[]
          ${after === null ? db`` : db`AND key > ${after}`}
        ORDER BY key LIMIT ${limit + 1}`;
      const entries = rows.slice(0, limit).map(toEntry);
      const last = entries.at(-1);
      return {
        entries,
        cursor: rows.length > limit && last ? encodeCursor(last.key) : null,
      };
    });
  }

  countByNamespace(): Promise<Record<string, number>> {
    return this.#run("count", async (db) => {
      const rows = await db`SELECT namespace, count(*)::int AS count
        FROM ${db(T.entries)} GROUP BY namespace`;
      const counts: Record<string, number> = {};
      for (const row of rows) {
        const { namespace, count } = CountRow.parse(row);
        counts[namespace] = count;
      }
      return counts;
    });
  }

  search(namespace: string, query: model.SearchQuery): Promise<model.Rankings> {
    return this.#run("search", async (db) => ({
      lexical: await lexicalRanks(db, namespace, query),
      vector: await vectorRanks(db, namespace, query, this.#schema.vectors),
    }));
  }

  staleEmbeddings(
    embedder: string,
    limit: number,
  ): Promise<model.StoredEntry[]> {
    return this.#run("stale_embeddings", async (db) => {
      const rows = await db`SELECT ${cols(db)} FROM ${db(T.entries)}
        WHERE NOT sensitive AND (embedding IS NULL OR embedder IS DISTINCT FROM ${embedder})
        ORDER BY namespace, key LIMIT ${limit}`;
      return rows.map(toEntry);
    });
  }

  setEmbedding(
    namespace: string,
    key: string,
    updatedAt: string,
    embedding: model.StoredEntry["embedding"],
  ): Promise<void> {
    return this.#run("set_embedding", async (db) => {
      const embedder = embedding?.embedder ?? null;
      await db`UPDATE ${db(T.entries)} SET embedder = ${embedder},
        embedding = ${vectorLiteral(embedding?.vector)}::real[]
        WHERE namespace = ${namespace} AND key = ${key} AND NOT sensitive
          AND updated_at = ${updatedAt}::timestamptz`;
    });
  }

  async appendMessages(
    namespace: string,
    sessionId: string,
    messages: model.Message[],
  ): Promise<number> {
    for (const m of messages) {
      checkNul(`A message of session "${sessionId}"`, [
        namespace,
        sessionId,
        m.role,
        m.content,
        // jsonb refuses the \u0000 escape that JSON.stringify writes for NUL.
        JSON.stringify(m.extra ?? null).replaceAll("\\u0000", "\u0000"),
      ]);
    }
    const column = <K extends keyof model.Message>(k: K) =>
      messages.map((m) => m[k]);
    const extras = messages.map((m) =>
      m.extra ? JSON.stringify(m.extra) : null
    );
    if (messages.length === 0) {
      return await this.#run("append_messages", async (db) => {
        const rows = await db`SELECT message_count::int AS total
          FROM ${db(T.sessions)}
          WHERE namespace = ${namespace} AND session_id = ${sessionId}`;
        return rows.length ? TotalRow.parse(rows[0]).total : 0;
      });
    }
    // One statement, one round trip: the upsert locks the session row until
    // it ends, so concurrent appenders (any number of daemons) take disjoint
    // seq ranges, and the messages go in with it or not at all.
    return await this.#run("append_messages", async (db) => {
      const sessions = db(T.sessions);
      const n = messages.length;
      const [row] = await db`WITH s AS (
          INSERT INTO ${sessions} (namespace, session_id, message_count)
          VALUES (${namespace}, ${sessionId}, ${n})
          ON CONFLICT (namespace, session_id) DO UPDATE
          SET message_count = ${sessions}.message_count + excluded.message_count,
            updated_at = now()
          RETURNING message_count::int AS total
        ), added AS (
          INSERT INTO ${db(T.messages)}
          (namespace, session_id, seq, role, content, at, extra)
          SELECT ${namespace}, ${sessionId}, s.total - ${n}::int + m.ord::int,
            m.role, m.content, m.at::timestamptz, m.extra::jsonb
          FROM s, unnest(${column("role")}::text[], ${
        column("content")
      }::text[],
            ${column("at")}::text[], ${extras}::text[])
            WITH ORDINALITY AS m(role, content, at, extra, ord)
        )
        SELECT total FROM s`;
      return TotalRow.parse(row).total;
    });
  }

  history(
    namespace: string,
    sessionId: string,
    limit: number,
  ): Promise<model.Message[]> {
    return this.#run("history", async (db) => {
      const messages = db(T.messages);
      const rows = await db`SELECT role, content, at, extra FROM ${messages}
        WHERE namespace = ${namespace} AND session_id = ${sessionId}
        ORDER BY seq DESC LIMIT ${Math.max(0, limit)}`;
      return rows.map((raw) => {
        const row = MessageRow.parse(raw);
        const message: model.Message = {
          role: row.role,
          content: row.content,
          at: row.at.toISOString(),
        };
        if (row.extra) message.extra = row.extra;
        return message;
      }).reverse();
    });
  }

  sessions(namespace: string): Promise<string[]> {
    return this.#run("sessions", async (db) => {
      const rows = await db`SELECT session_id FROM ${db(T.sessions)}
        WHERE namespace = ${namespace} ORDER BY session_id`;
      return rows.map((row) => SessionRow.parse(row).session_id);
    });
  }

  async health(): Promise<model.BackendHealth> {
    try {
      await this.#run("health", (db) => db`SELECT 1`);
      return {
        status: "ok",
        detail: `PostgreSQL at ${this.#guard.url}; ${this.#schema.note}`,
      };
    } catch (error) {
      return {
        status: "down",
        detail: messageOf(error),
      };
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#sql.end({ timeout: 2 });
    await Promise.all(this.#ending);
  }

  /**
   * After a missed deadline the pool's queries would otherwise wait, and be
   * retried, until the server answers, then run long after their callers
   * gave up (and after the hosted queue replayed them). Ending the pool
   * drops them; the next operation gets a fresh pool.
   */
  #dropPool(): void {
    if (this.#closed) return;
    const old = this.#sql;
    this.#sql = this.#newPool();
    const ending = old.end({ timeout: 0 }).catch(() => {}).finally(() => {
      this.#ending.delete(ending);
    });
    this.#ending.add(ending);
  }

  #run<R>(op: string, fn: (db: Db) => Promise<R>): Promise<R> {
    if (this.#closed) {
      return Promise.reject(
        new Error("The PostgreSQL memory backend is closed"),
      );
    }
    return guarded(this.#guard, op, () => fn(this.#sql));
  }
}

function cols(db: Db): postgres.Fragment {
  return db`namespace, key, value, tags, sensitive, created_at, updated_at, embedder,
    embedding::real[] AS embedding`;
}
