// Daemon configuration: the daemon-wide keys and one schema with a section
// per server, merged from defaults < config file < AGENTD_* env < CLI flags
// by the general engine in config_merge.ts.

import { z } from "zod";
import type { LogLevel } from "./log.ts";
import { JwtConfig } from "./jwt_config.ts";
import {
  ConfigError,
  type ConfigSources,
  formatPath,
  type LoadedConfig,
  mergeConfig,
  strictify,
  summary,
} from "./config_merge.ts";

const PORT_MSG = "expected an integer from 0 to 65535";
const POSITIVE_MSG = "expected a positive integer";
const NON_NEGATIVE_MSG = "expected a non-negative integer";

const intIn = (min: number, max: number, error: string) =>
  z.number({ error }).int({ error }).min(min, { error }).max(max, { error });

const nonEmpty = z.string().min(1, { error: "must not be empty" });

export const baseConfigShape = {
  host: nonEmpty.default("127.0.0.1"),
  port: intIn(0, 65535, PORT_MSG).default(8765),
  data_dir: nonEmpty.optional(),
  /** `postgres://…` to share state among daemons, or a KV file; default `<data_dir>/store.kv`. */
  store: nonEmpty.optional(),
  /** PostgreSQL store only; defaults in platform/store/pg.ts (8, 5000, 10000). */
  store_pool_size: intIn(1, 1000, POSITIVE_MSG).optional(),
  store_connect_timeout_ms: intIn(1, 600_000, POSITIVE_MSG).optional(),
  store_statement_timeout_ms: intIn(1, 600_000, POSITIVE_MSG).optional(),
  /** Server ids to start; all registered servers when absent. */
  servers: z.array(nonEmpty).optional(),
  token: z.string().min(16, { error: "expected at least 16 characters" })
    .optional(),
  token_file: nonEmpty.optional(),
  /** Agent name -> bearer token; a caller presenting one is bound to that agent's namespace. */
  agent_tokens: z.record(
    z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, {
      error: "agent names are 1-64 letters, digits, '.', '_' or '-'",
    }),
    z.string().min(16, { error: "expected at least 16 characters" }),
  ).default({}),
  /** JWT bearer tokens (HS256 secret or JWKS) whose agent claim binds the caller, like agent_tokens. */
  jwt: JwtConfig.optional(),
  allowed_hosts: z.array(nonEmpty).default([]),
  allowed_origins: z.array(nonEmpty).default([]),
  max_body_bytes: intIn(1, Number.MAX_SAFE_INTEGER, POSITIVE_MSG).default(
    1048576,
  ),
  log_level: z.enum(["debug", "info", "warn", "error"]).default("info"),
  shutdown_timeout_ms: intIn(0, Number.MAX_SAFE_INTEGER, NON_NEGATIVE_MSG)
    .default(30000),
  session_idle_timeout_ms: intIn(0, Number.MAX_SAFE_INTEGER, NON_NEGATIVE_MSG)
    .default(300000),
  /** Open MCP sessions per server; past it the least recently used idle one is evicted. */
  session_max: intIn(1, Number.MAX_SAFE_INTEGER, POSITIVE_MSG).default(1000),
  /** The same cap per agent (agent token or JWT agent claim). */
  session_max_per_agent: intIn(1, Number.MAX_SAFE_INTEGER, POSITIVE_MSG)
    .default(100),
};

export type BaseConfig = {
  host: string;
  port: number;
  data_dir?: string;
  store?: string;
  store_pool_size?: number;
  store_connect_timeout_ms?: number;
  store_statement_timeout_ms?: number;
  servers?: string[];
  token?: string;
  token_file?: string;
  agent_tokens: Record<string, string>;
  jwt?: JwtConfig;
  allowed_hosts: string[];
  allowed_origins: string[];
  max_body_bytes: number;
  log_level: LogLevel;
  shutdown_timeout_ms: number;
  session_idle_timeout_ms: number;
  session_max: number;
  session_max_per_agent: number;
};

const baseSchema = z.object(baseConfigShape);

/**
 * Base keys plus one optional section per server id (and per daemon part,
 * e.g. `agents`, `providers`); unknown keys are rejected at every level.
 */
export function buildConfigSchema(
  serverSections: Record<string, z.ZodObject | z.ZodRecord>,
): z.ZodObject {
  const shape: Record<string, z.core.$ZodType> = { ...baseConfigShape };
  for (const [id, section] of Object.entries(serverSections)) {
    if (id in shape) {
      throw new Error(`server id "${id}" collides with a daemon config key`);
    }
    shape[id] = z.optional(strictify(section));
  }
  return z.object(shape).strict();
}

/** Typed view of the daemon-wide settings in a loaded config (server sections are dropped). */
export function readBaseConfig(values: Record<string, unknown>): BaseConfig {
  const result = baseSchema.safeParse(values);
  if (!result.success) {
    const problems = result.error.issues.map((i) =>
      `config ${formatPath(i.path)}: ${i.message}`
    );
    throw new ConfigError(summary(problems), problems);
  }
  const config: BaseConfig = result.data;
  return config;
}

/** The daemon's layers merged and checked; `token_file` is read into `token`. */
export function loadConfig(
  schema: z.ZodObject,
  sources: ConfigSources,
): Promise<LoadedConfig> {
  return mergeConfig(schema, sources, { fileValues: { token_file: "token" } });
}
