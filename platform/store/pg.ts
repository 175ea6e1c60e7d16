/**
 * Store on PostgreSQL, so several daemons share one state.
 *
 * One row per key (see pg_schema.ts): the encoded key as bytea (bytea
 * compares like memcmp, so SQL order is the Store's key order), the key as
 * JSON, the value's serialized bytes (JSON, or tagged binary) and a version drawn from one sequence. A
 * commit takes a transaction-scoped advisory lock per touched key (sorted, so
 * two commits never deadlock), compares the checked versions, then writes:
 * checks and writes are atomic across every daemon. Caches elsewhere stay
 * exact by comparing versions (e.g. the gateway's registrations fingerprint).
 *
 * A server that cannot be reached is a StoreUnavailable error, never a local
 * fallback; postgres.js reconnects by itself once the server is back.
 */
import postgres from "postgres";
import {
  bytesToBinary,
  type Check,
  type CommitResult,
  entryOf,
  type ListOptions,
  type ListPage,
  listRange,
  type Mutation,
  OperationTracker,
  pageOf,
  prepareCommit,
  type Store,
  type StoreEntry,
  StoreError,
  type StoreKey,
  StoreUnavailable,
  type StoreValue,
  validateKey,
} from "./mod.ts";
import { migrateStore, STORE_TABLE } from "./pg_schema.ts";
import { messageOf } from "../errors.ts";
import { openPgPool } from "./pg_pool.ts";
import { checkPgUrl, passwordIn, redactSecret } from "./pg_url.ts";

export interface PgStoreOptions {
  /** `postgres://user[:password]@host:port/database`. */
  url: string;
  /** Overrides a password in the URL; kept out of every message. */
  password?: string;
  /** Pool size (default 8). */
  maxConnections?: number;
  /** Connecting gives up after this long (default 5000). */
  connectTimeoutMs?: number;
  /** Server-side statement and lock timeout (default 10000). */
  statementTimeoutMs?: number;
  /** Application name seen in pg_stat_activity. */
  applicationName?: string;
}

type Sql = postgres.Sql;
type Tx = postgres.TransactionSql;
type Row = Record<string, unknown>;

const T = STORE_TABLE;

export class PgStore implements Store {
  readonly kind = "postgres";
  #sql: Sql;
  #url: string;
  #secret: string;
  #deadlineMs: number;
  #operations = new OperationTracker();

  private constructor(sql: Sql, url: string, secret: string, deadline: number) {
    this.#sql = sql;
    this.#url = url;
    this.#secret = secret;
    this.#deadlineMs = deadline;
  }

  /** Connects and brings the tables to the current schema version. */
  static async connect(options: PgStoreOptions): Promise<PgStore> {
    const url = publicPgUrl(options.url);
    const secret = options.password ?? passwordIn(options.url);
    const connectMs = options.connectTimeoutMs ?? 5000;
    const statementMs = options.statementTimeoutMs ?? 10_000;
    const sql = openPgPool({
      url: options.url,
      password: options.password,
      maxConnections: options.maxConnections ?? 8,
      connectTimeoutMs: connectMs,
      statementTimeoutMs: statementMs,
      applicationName: options.applicationName ?? "agentd-store",
    });
    const store = new PgStore(sql, url, secret, connectMs + statementMs);
    try {
      await store.#guard(() => migrateStore(sql));
    } catch (error) {
      await sql.end({ timeout: 0 }).catch(() => {});
      throw error;
    }
    return store;
  }

  /** Where it points, without the password. */
  get url(): string {
    return this.#url;
  }

  /** Answers when the server does; throws StoreUnavailable when not (a hung server: after `timeoutMs`). */
  ping(timeoutMs = 2000): Promise<void> {
    return this.#guard(async () => {
      await this.#sql`SELECT 1`;
    }, Math.min(timeoutMs, this.#deadlineMs));
  }

  get(key: StoreKey): Promise<StoreEntry | null> {
    return this.#run(async () => {
      const [entry] = await this.#getMany([key]);
      return entry;
    });
  }

  getMany(keys: readonly StoreKey[]): Promise<(StoreEntry | null)[]> {
    return this.#run(() => this.#getMany(keys));
  }

  set(key: StoreKey, value: StoreValue): Promise<string> {
    return this.#run(async () => {
      const result = await this.#commit({
        mutations: [{ type: "set", key, value }],
      });
      if (!result.ok) throw new StoreError("Unconditional set failed");
      return result.version;
    });
  }

  delete(key: StoreKey): Promise<void> {
    return this.#run(async () => {
      await this.#commit({ mutations: [{ type: "delete", key }] });
    });
  }

  list(prefix: StoreKey, options?: ListOptions): Promise<ListPage> {
    return this.#run(() => this.#list(prefix, options));
  }

  commit(
    op: { checks?: Check[]; mutations: Mutation[] },
  ): Promise<CommitResult> {
    return this.#run(() => this.#commit(op));
  }

  flush(): Promise<void> {
    return this.#operations.flush();
  }

  close(): Promise<void> {
    return this.#operations.close(async () => {
      await this.#sql.end({ timeout: 5 });
    });
  }

  #run<T>(operation: () => Promise<T>): Promise<T> {
    return this.#operations.run(() => this.#guard(operation));
  }

  async #getMany(keys: readonly StoreKey[]): Promise<(StoreEntry | null)[]> {
    const ids = keys.map((key) => validateKey(key));
    if (ids.length === 0) return [];
    const rows = await this.#sql`SELECT k, key, v, version FROM ${
      this.#sql(T)
    } WHERE k IN (SELECT decode(h, 'hex') FROM unnest(${
      ids.map(toHex)
    }::text[]) h)`;
    const byId = new Map<string, StoreEntry>();
    for (const row of rows) {
      const entry = toEntry(row);
      byId.set(bytesToBinary(bytesOf(row.k)), entry);
    }
    return ids.map((id) => byId.get(id) ?? null);
  }

  async #list(
    prefix: StoreKey,
    options: ListOptions | undefined,
  ): Promise<ListPage> {
    const range = listRange(prefix, options);
    const { prefixId, limit, reverse, after } = range;
    // Every child key continues with a tag byte below 0xff.
    const low = toHex(reverse || after === null ? prefixId : after);
    const high = toHex(reverse && after !== null ? after : `${prefixId}\xff`);
    const sql = this.#sql;
    const rows = reverse
      ? await sql`SELECT k, key, v, version FROM ${sql(T)}
          WHERE k > decode(${low}, 'hex') AND k < decode(${high}, 'hex')
          ORDER BY k DESC LIMIT ${limit + 1}`
      : await sql`SELECT k, key, v, version FROM ${sql(T)}
          WHERE k > decode(${low}, 'hex') AND k < decode(${high}, 'hex')
          ORDER BY k LIMIT ${limit + 1}`;
    const page = pageOf(range, rows, (row) => bytesToBinary(bytesOf(row.k)));
    return { entries: page.rows.map(toEntry), cursor: page.cursor };
  }

  async #commit(
    op: { checks?: Check[]; mutations: Mutation[] },
  ): Promise<CommitResult> {
    const prepared = prepareCommit(op);
    const touched = new Set<string>();
    for (const c of prepared.checks) touched.add(c.id);
    for (const m of prepared.mutations) touched.add(m.id);
    const locks = await Promise.all([...touched].map(lockOf));
    locks.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const result = await this.#sql.begin(async (tx: Tx) => {
      await tx`SELECT pg_advisory_xact_lock(l) FROM unnest(${
        locks.map(String)
      }::bigint[]) l ORDER BY l`;
      if (prepared.checks.length > 0) {
        const rows = await tx`SELECT k, version FROM ${tx(T)}
          WHERE k IN (SELECT decode(h, 'hex') FROM unnest(${
          prepared.checks.map((c) => toHex(c.id))
        }::text[]) h)`;
        const current = new Map<string, string>();
        for (const row of rows) {
          current.set(bytesToBinary(bytesOf(row.k)), versionText(row.version));
        }
        for (const check of prepared.checks) {
          if ((current.get(check.id) ?? null) !== check.version) {
            return { ok: false } as const;
          }
        }
      }
      const [{ n }] = await tx`SELECT nextval('agentd_store_version') AS n`;
      const version = versionText(n);
      for (const m of prepared.mutations) {
        const k = toHex(m.id);
        if (m.type === "set") {
          await tx`INSERT INTO ${tx(T)} (k, key, v, version)
            VALUES (decode(${k}, 'hex'), ${JSON.stringify(m.key)}, ${m.bytes},
              ${String(n)}::bigint)
            ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v,
              version = EXCLUDED.version`;
        } else {
          await tx`DELETE FROM ${tx(T)} WHERE k = decode(${k}, 'hex')`;
        }
      }
      return { ok: true, version } as const;
    });
    return result;
  }

  /** Runs one operation, bounded client-side (a hung server answers no timeout), mapping outages. */
  async #guard<T>(
    operation: () => Promise<T>,
    deadlineMs = this.#deadlineMs,
  ): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new StoreUnavailable(
              `PostgreSQL store at ${this.#url} did not answer within ${deadlineMs} ms`,
            ),
          ),
        deadlineMs,
      );
    });
    try {
      return await Promise.race([operation(), deadline]);
    } catch (error) {
      throw this.#classify(error);
    } finally {
      clearTimeout(timer);
    }
  }

  #classify(error: unknown): unknown {
    if (error instanceof StoreError || error instanceof StoreUnavailable) {
      return error;
    }
    const text = redactSecret(messageOf(error), this.#secret);
    if (isOutage(error)) {
      return new StoreUnavailable(
        `PostgreSQL store at ${this.#url} is unreachable: ${text}`,
        { cause: error },
      );
    }
    return new StoreError(`PostgreSQL store error: ${text}`, { cause: error });
  }
}

const OUTAGE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now
]);

function isOutage(error: unknown): boolean {
  if (error instanceof Deno.errors.ConnectionRefused) return true;
  if (error instanceof Deno.errors.ConnectionReset) return true;
  if (error instanceof Deno.errors.BrokenPipe) return true;
  if (typeof error !== "object" || error === null) return false;
  const code = "code" in error ? String(error.code) : "";
  if (OUTAGE_CODES.has(code) || code.startsWith("08")) return true;
  const message = "message" in error ? String(error.message) : "";
  return /connection refused|connect(ion)? (reset|closed|timeout)|write CONNECTION_CLOSED|broken pipe/i
    .test(message);
}

function toEntry(row: Row): StoreEntry {
  const key: unknown = JSON.parse(String(row.key));
  if (!Array.isArray(key)) throw new StoreError("Corrupt key in store");
  const parts: (string | number)[] = [];
  for (const part of key) {
    if (typeof part !== "string" && typeof part !== "number") {
      throw new StoreError("Corrupt key in store");
    }
    parts.push(part);
  }
  return entryOf(parts, bytesOf(row.v), versionText(row.version));
}

function bytesOf(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value;
  throw new StoreError("Corrupt record in store: expected bytes");
}

/** Same shape as a Deno KV versionstamp: 20 hex digits, increasing. */
function versionText(value: unknown): string {
  return BigInt(String(value)).toString(16).padStart(20, "0");
}

function toHex(binary: string): string {
  let hex = "";
  for (let i = 0; i < binary.length; i++) {
    hex += binary.charCodeAt(i).toString(16).padStart(2, "0");
  }
  return hex;
}

/** A signed 64-bit advisory lock id from the key's encoding. */
async function lockOf(id: string): Promise<bigint> {
  const bytes = Uint8Array.from(id, (c) => c.charCodeAt(0));
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return new DataView(digest).getBigInt64(0);
}

/** The URL without its password; throws a clear error for a non-postgres URL. */
export function publicPgUrl(url: string): string {
  try {
    return checkPgUrl(url);
  } catch (error) {
    throw new StoreError(messageOf(error));
  }
}
