/**
 * The one way agentd opens PostgreSQL: a `postgres` (porsager) pool from a
 * URL with the daemon's settings (pool size, connect and statement timeouts,
 * prompt reconnects, no notices on stdout); the URL helpers that keep its
 * password out of logs are in pg_url.ts (they need no driver). The daemon's Store (pg.ts) and the memory
 * server's hosted mode (tools/memory/backends/pg.ts) both open through it;
 * each keeps its own tables.
 */
import postgres from "postgres";
import { checkPgUrl } from "./pg_url.ts";

export interface PgPoolOptions {
  /** `postgres://user[:password]@host:port/database`. */
  url: string;
  /** Overrides a password in the URL. */
  password?: string;
  maxConnections: number;
  /** Connecting gives up after this long. */
  connectTimeoutMs: number;
  /** Server-side statement and lock timeout. */
  statementTimeoutMs: number;
  /** Application name seen in pg_stat_activity. */
  applicationName: string;
}

/** Opens a pool (connections are made on first use); checks the URL first. */
export function openPgPool(options: PgPoolOptions): postgres.Sql {
  checkPgUrl(options.url);
  survivePostgresWriteRace();
  return postgres(options.url, {
    password: options.password,
    max: options.maxConnections,
    connect_timeout: options.connectTimeoutMs / 1000,
    idle_timeout: 60,
    // Reconnect promptly after an outage (the default backoff grows to 20 s).
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
    // Notices ("relation already exists, skipping") would go to stdout, which
    // belongs to the MCP stdio transport.
    onnotice: () => {},
    connection: {
      application_name: options.applicationName,
      statement_timeout: options.statementTimeoutMs,
      lock_timeout: options.statementTimeoutMs,
      idle_in_transaction_session_timeout: options.statementTimeoutMs * 2,
    },
  });
}

let writeRaceGuarded = false;

/**
 * postgres.js 3.4.9 flushes buffered writes on a setImmediate that can fire
 * after a server shutdown closed the socket (`socket` is null), throwing an
 * uncaught TypeError that would end the daemon. The queries on that socket are
 * already failed by then, so that one error is swallowed; any other is not.
 * Likewise a Node-style socket error (ECONNRESET…) some internal promise of
 * the client rejects with as the server goes away: the operations on that
 * connection fail on their own.
 */
function survivePostgresWriteRace(): void {
  if (writeRaceGuarded) return;
  writeRaceGuarded = true;
  globalThis.addEventListener("error", (event) => {
    const error: unknown = event.error;
    if (
      error instanceof TypeError &&
      /reading 'write'/.test(error.message) &&
      /postgres[^\n]*connection\.js/.test(error.stack ?? "") &&
      /nextWrite/.test(error.stack ?? "")
    ) event.preventDefault();
  });
  globalThis.addEventListener("unhandledrejection", (event) => {
    const reason: unknown = event.reason;
    if (
      reason instanceof Error && "syscall" in reason && "code" in reason &&
      SOCKET_CODES.has(String(reason.code))
    ) event.preventDefault();
  });
}

const SOCKET_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
]);
