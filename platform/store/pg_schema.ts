/**
 * The PostgreSQL Store's tables and their versioned migrations. Each
 * migration runs once, in order, under an advisory lock so daemons starting
 * together do not race; a database migrated by a newer agentd is refused.
 */
import type postgres from "postgres";
import { StoreError } from "./mod.ts";

export const STORE_TABLE = "agentd_store";
const MIGRATIONS_TABLE = "agentd_store_migrations";
/** Any fixed number distinct from the memory server's lock. */
const MIGRATION_LOCK = 7_340_019_019n;

/** Index i is schema version i + 1; never edit one that shipped, append. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE ${STORE_TABLE} (
    k bytea PRIMARY KEY,
    key text NOT NULL,
    v bytea NOT NULL,
    version bigint NOT NULL
  );
  CREATE SEQUENCE agentd_store_version;`,
];

export const STORE_SCHEMA_VERSION = MIGRATIONS.length;

export async function migrateStore(sql: postgres.Sql): Promise<number> {
  return await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${String(MIGRATION_LOCK)}::bigint)`;
    await tx.unsafe(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (
      version integer PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now())`);
    const rows = await tx.unsafe(
      `SELECT coalesce(max(version), 0)::int AS v FROM ${MIGRATIONS_TABLE}`,
    );
    const found = Number(rows[0]?.v ?? 0);
    if (found > STORE_SCHEMA_VERSION) {
      throw new StoreError(
        `The store tables were created by a newer agentd (schema ${found}, this one knows ` +
          `${STORE_SCHEMA_VERSION}); upgrade agentd`,
      );
    }
    for (let version = found + 1; version <= STORE_SCHEMA_VERSION; version++) {
      await tx.unsafe(MIGRATIONS[version - 1]);
      await tx.unsafe(
        `INSERT INTO ${MIGRATIONS_TABLE} (version) VALUES (${version})`,
      );
    }
    return STORE_SCHEMA_VERSION;
  });
}
