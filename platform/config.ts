// Daemon configuration: one zod schema, four layers merged in order
// defaults < config file < AGENTD_* env < CLI flags. Every problem is reported
// with where the offending value came from, so users can find and fix it.
import { z } from "zod";
import { isSecretKey, type LogLevel } from "./log.ts";
import { messageOf } from "./errors.ts";
import { JwtConfig } from "./jwt.ts";

export class ConfigError extends Error {
  /** One line per problem, `<source> <path>: <message>`. */
  readonly problems: string[];
  constructor(message: string, problems: string[] = [message]) {
    super(message);
    this.name = "ConfigError";
    this.problems = problems;
  }
}

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
    .default(1800000),
};

export type BaseConfig = {
  host: string;
  port: number;
  data_dir?: string;
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

export interface ConfigSources {
  /** Explicit file (--config / AGENTD_CONFIG): must exist. */
  file?: string;
  /** `<configDir>/agentd.json`, used when `file` is absent and read only if it exists. */
  defaultFile?: string;
  env: Record<string, string>;
  /** snake_case keys; server settings nested under their section id. */
  flags: Record<string, unknown>;
}

export type ConfigOrigin = "default" | "file" | "env" | "flag";

export interface LoadedConfig {
  values: Record<string, unknown>;
  file?: string;
  /** Top-level key -> the highest-precedence layer that set any part of it. */
  origin: Record<string, ConfigOrigin>;
}

export async function loadConfig(
  schema: z.ZodObject,
  sources: ConfigSources,
): Promise<LoadedConfig> {
  const merger = new Merger();
  const problems: string[] = [];

  const file = sources.file ?? sources.defaultFile;
  let fileUsed: string | undefined;
  if (file !== undefined) {
    const data = await readConfigFile(file, sources.file !== undefined);
    if (data !== undefined) {
      fileUsed = file;
      merger.mergeTree(data, [], (path) => ({
        origin: "file",
        label: (issuePath) => `file ${file} ${formatPath(issuePath)}`,
        path,
      }));
    }
  }

  for (const { name, path, schema: target } of envBindings(schema)) {
    const raw = sources.env[name];
    // Empty means unset, as with most tools that read the environment.
    if (raw === undefined || raw === "") continue;
    merger.set(path, coerce(raw, target), {
      origin: "env",
      label: (issuePath) =>
        `env ${name}${formatPath(issuePath.slice(path.length), true)}`,
      path,
      raw,
    });
  }

  merger.mergeTree(sources.flags, [], (path) => ({
    origin: "flag",
    label: (issuePath) => `flag ${formatPath(issuePath)}`,
    path,
  }), schema);

  await loadTokenFile(merger, problems);

  const result = await schema.safeParseAsync(merger.data);
  if (!result.success) {
    for (const issue of result.error.issues) {
      problems.push(...merger.describe(issue));
    }
  }
  if (problems.length > 0 || !result.success) {
    throw new ConfigError(summary(problems), problems);
  }

  const values: Record<string, unknown> = result.data;
  const origin: Record<string, ConfigOrigin> = {};
  for (const key of Object.keys(values)) {
    origin[key] = merger.origin[key] ?? "default";
  }
  return { values, file: fileUsed, origin };
}

function summary(problems: string[]): string {
  return problems.length === 1
    ? `invalid configuration: ${problems[0]}`
    : `invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`;
}

async function readConfigFile(
  file: string,
  explicit: boolean,
): Promise<Record<string, unknown> | undefined> {
  const fail = (why: string) => new ConfigError(`config file ${file}: ${why}`);
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (err) {
    if (!explicit && err instanceof Deno.errors.NotFound) return undefined;
    throw fail(readError(err));
  }
  let data: unknown;
  try {
    // Editors on Windows like to prepend a BOM, which JSON.parse rejects.
    data = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch (err) {
    // V8 may quote a snippet of the file, which could hold the token: drop it.
    const why = String(err).replace(/^SyntaxError: /, "").replace(
      /, ".*$/s,
      "",
    );
    throw fail(`invalid JSON: ${why}`);
  }
  if (!isPlainObject(data)) throw fail("expected a JSON object");
  return data;
}

/** token_file is resolved here so the token is validated like any other value. */
async function loadTokenFile(
  merger: Merger,
  problems: string[],
): Promise<void> {
  const tokenFile = merger.data.token_file;
  if (
    typeof tokenFile !== "string" || tokenFile === "" ||
    merger.data.token !== undefined
  ) return;
  const rec = merger.recordFor(["token_file"]);
  const where = rec?.label(["token_file"]) ?? "config token_file";
  let token: string;
  try {
    token = (await Deno.readTextFile(tokenFile)).trim();
  } catch (err) {
    problems.push(`${where}: token file ${tokenFile}: ${readError(err)}`);
    return;
  }
  if (token === "") {
    problems.push(`${where}: token file ${tokenFile} is empty`);
    return;
  }
  merger.set(["token"], token, {
    origin: rec?.origin ?? "file",
    label: () => `token_file ${tokenFile}`,
    path: ["token"],
  });
}

function readError(err: unknown): string {
  if (err instanceof Deno.errors.NotFound) return "not found";
  return `cannot read: ${messageOf(err)}`;
}

// ---- schema introspection ---------------------------------------------------

const WRAPPERS = new Set(
  "optional default nullable prefault readonly catch nonoptional".split(" "),
);

/** Peels wrappers that don't change what input is accepted (optional, default, pipe input, ...). */
export function unwrap(schema: z.core.$ZodType): z.core.$ZodType {
  for (let s = schema;;) {
    const def = s._zod.def;
    const key = WRAPPERS.has(def.type)
      ? "innerType"
      : def.type === "pipe"
      ? "in"
      : "";
    const inner: unknown = key === "" ? undefined : Reflect.get(def, key);
    if (!(inner instanceof z.core.$ZodType)) return s;
    s = inner;
  }
}

/**
 * Makes every plain (strip-mode) object inside `schema` strict. Objects that
 * chose loose/catchall behaviour keep it; clone({ parent }) keeps metadata.
 */
function strictify(schema: z.core.$ZodType): z.core.$ZodType {
  const def = schema._zod.def;
  const patch: Record<string, unknown> = {};
  // Wrappers (optional, default, ...), arrays and pipes hold their inner schema here.
  for (const key of ["innerType", "element", "in"]) {
    const inner: unknown = Reflect.get(def, key);
    if (inner instanceof z.core.$ZodType) patch[key] = strictify(inner);
  }
  if (schema instanceof z.ZodObject) {
    const entries = Object.entries(schema.shape);
    patch.shape = Object.fromEntries(
      entries.map(([k, v]) => [k, strictify(v)]),
    );
    patch.catchall = schema.def.catchall ?? z.never();
  }
  if (Object.keys(patch).length === 0) return schema;
  return z.core.util.clone(schema, patchDef(def, patch), { parent: true });
}

/** Copies a def keeping its getters: ZodDefault's defaultValue must stay a fresh copy per parse. */
function patchDef<T extends object>(def: T, patch: Record<string, unknown>): T {
  const descriptors = {
    ...Object.getOwnPropertyDescriptors(def),
    ...Object.getOwnPropertyDescriptors(patch),
  };
  return Object.defineProperties(Object.assign({}, def), descriptors);
}

function childSchema(
  schema: z.core.$ZodType | undefined,
  key: string,
): z.core.$ZodType | undefined {
  if (schema === undefined) return undefined;
  const s = unwrap(schema);
  return s instanceof z.ZodObject ? s.shape[key] : undefined;
}

const envPart = (key: string) => key.toUpperCase().replace(/[^A-Z0-9]/g, "_");

interface EnvBinding {
  name: string;
  path: string[];
  schema: z.core.$ZodType;
}

/** AGENTD_<KEY> for top-level keys, AGENTD_<SECTION>__<KEY> for keys of object-typed sections. */
function envBindings(schema: z.ZodObject): EnvBinding[] {
  const out: EnvBinding[] = [];
  for (const [key, value] of Object.entries(schema.shape)) {
    const inner = unwrap(value);
    if (inner instanceof z.ZodObject) {
      for (const [sub, subSchema] of Object.entries(inner.shape)) {
        out.push({
          name: `AGENTD_${envPart(key)}__${envPart(sub)}`,
          path: [key, sub],
          schema: subSchema,
        });
      }
    } else {
      out.push({ name: `AGENTD_${envPart(key)}`, path: [key], schema: value });
    }
  }
  return out;
}

const NUMBER_RE = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/**
 * Turns a string (env var, or an untyped CLI flag) into the schema's type.
 * Unconvertible input is returned unchanged so the schema reports it.
 */
function coerce(raw: string, schema: z.core.$ZodType | undefined): unknown {
  const s = schema === undefined ? undefined : unwrap(schema);
  const text = raw.trim();
  if (s instanceof z.ZodNumber) {
    return NUMBER_RE.test(text) ? Number(text) : raw;
  }
  if (s instanceof z.ZodBoolean) {
    const lower = text.toLowerCase();
    if (lower === "true" || lower === "1") return true;
    if (lower === "false" || lower === "0") return false;
    return raw;
  }
  if (s instanceof z.ZodArray) {
    return raw.split(",").map((t) => t.trim()).filter((t) => t !== "").map((
      t,
    ) => coerce(t, s.element));
  }
  if (s instanceof z.ZodObject || s instanceof z.ZodRecord) {
    try {
      return JSON.parse(raw);
    } catch {
      return raw;
    }
  }
  return raw;
}

// ---- merging with provenance -------------------------------------------------

interface Rec {
  origin: ConfigOrigin;
  path: string[];
  /** Describes a problem location at or below `path`, e.g. "env AGENTD_PORT". */
  label: (issuePath: readonly PropertyKey[]) => string;
  /** Original text for env values, shown in errors instead of the coerced value. */
  raw?: string;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

const isPrefix = (a: readonly PropertyKey[], b: readonly PropertyKey[]) =>
  a.length <= b.length && a.every((seg, i) => seg === b[i]);

class Merger {
  readonly data: Record<string, unknown> = {};
  readonly origin: Record<string, ConfigOrigin> = {};
  private records: Rec[] = [];

  /** Sets a leaf value, replacing whatever a lower layer put at, above or below `path`. */
  set(path: string[], value: unknown, rec: Rec): void {
    let node = this.data;
    for (const seg of path.slice(0, -1)) {
      const next = node[seg];
      if (isPlainObject(next)) node = next;
      else node = node[seg] = {};
    }
    node[path[path.length - 1]] = value;
    this.records = this.records.filter((r) =>
      !isPrefix(r.path, path) && !isPrefix(path, r.path)
    );
    this.records.push(rec);
    this.origin[path[0]] = rec.origin;
  }

  /** Deep-merges plain objects; arrays and scalars replace. Strings are coerced when a schema is given. */
  mergeTree(
    tree: Record<string, unknown>,
    prefix: string[],
    makeRec: (path: string[]) => Rec,
    schema?: z.core.$ZodType,
  ): void {
    for (const [key, value] of Object.entries(tree)) {
      if (value === undefined) continue; // CLI parsers report absent flags as undefined
      const path = [...prefix, key];
      const sub = childSchema(schema, key);
      if (isPlainObject(value) && Object.keys(value).length > 0) {
        this.mergeTree(value, path, makeRec, sub);
      } else if (schema !== undefined && typeof value === "string") {
        this.set(path, coerce(value, sub), { ...makeRec(path), raw: value });
      } else {
        this.set(path, value, makeRec(path));
      }
    }
  }

  recordFor(path: readonly PropertyKey[]): Rec | undefined {
    let best: Rec | undefined;
    for (const r of this.records) {
      if (
        isPrefix(r.path, path) &&
        (best === undefined || r.path.length > best.path.length)
      ) best = r;
    }
    return best;
  }

  /** Turns one zod issue into `<source> <path>: <message>` lines. */
  describe(issue: z.core.$ZodIssue): string[] {
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) =>
        `${this.where([...issue.path, key])}: unknown key`
      );
    }
    const rec = this.recordFor(issue.path);
    const samePath = rec !== undefined && rec.path.length === issue.path.length;
    const value = samePath && rec.raw !== undefined
      ? rec.raw
      : valueAt(this.data, issue.path);
    let message = issue.message;
    if (issue.code === "invalid_type" && message.startsWith("Invalid input:")) {
      message = value === undefined
        ? `required, expected ${issue.expected}`
        : `expected ${issue.expected}`;
    }
    // Never echo values under secret-looking keys (token, api_key, ...).
    const secret = issue.path.some((seg) =>
      typeof seg === "string" && isSecretKey(seg)
    );
    if (
      !secret &&
      (typeof value === "string" || typeof value === "number" ||
        typeof value === "boolean")
    ) {
      const shown = JSON.stringify(value);
      message += `, got ${
        shown.length > 80 ? shown.slice(0, 77) + "..." : shown
      }`;
    }
    return [`${this.where(issue.path)}: ${message}`];
  }

  private where(path: readonly PropertyKey[]): string {
    return this.recordFor(path)?.label(path) ?? `config ${formatPath(path)}`;
  }
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let node = root;
  for (const seg of path) {
    if (Array.isArray(node) && typeof seg === "number") node = node[seg];
    else if (isPlainObject(node) && typeof seg === "string") node = node[seg];
    else return undefined;
  }
  return node;
}

/** `a.b[2].c`; with `continued`, a leading `.` is kept so it can follow another name. */
function formatPath(path: readonly PropertyKey[], continued = false): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else out += out === "" && !continued ? String(seg) : `.${String(seg)}`;
  }
  return out === "" && !continued ? "(root)" : out;
}
