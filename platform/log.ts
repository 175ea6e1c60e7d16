// Structured logging: one JSON object per line on stderr. Stdout is reserved
// for the MCP stdio transport, so nothing here may ever write to it.

export type LogLevel = "debug" | "info" | "warn" | "error";

export const LOG_LEVELS: readonly LogLevel[] = [
  "debug",
  "info",
  "warn",
  "error",
];

const LEVEL_RANK: Record<LogLevel, number> = {
  debug: 10,
  info: 20,
  warn: 30,
  error: 40,
};

export interface Logger {
  debug(event: string, fields?: Record<string, unknown>): void;
  info(event: string, fields?: Record<string, unknown>): void;
  warn(event: string, fields?: Record<string, unknown>): void;
  error(event: string, fields?: Record<string, unknown>): void;
  /** A logger that adds `fields` to every line; shares level, sink and secrets. */
  child(fields: Record<string, unknown>): Logger;
  /** Registers a value to scrub from every line of the root and all children. */
  addSecret(value: string): void;
}

export interface LoggerOptions {
  level?: LogLevel;
  sink?: (line: string) => void;
  clock?: () => number;
  base?: Record<string, unknown>;
}

export const REDACTED = "[redacted]";

/** Values shorter than this are ignored by addSecret: scrubbing "abc" would mangle ordinary text. */
export const MIN_SECRET_LENGTH = 8;

const SECRET_KEYS = new Set([
  "authorization",
  "proxy_authorization",
  "token",
  "access_token",
  "refresh_token",
  "id_token",
  "api_key",
  "apikey",
  "key",
  "secret",
  "client_secret",
  "password",
  "passwd",
  "cookie",
  "set_cookie",
  "x_api_key",
  "private_key",
  "credential",
  "credentials",
]);
const SECRET_SUFFIXES = ["_token", "_secret", "_password", "_key"];

/** Secret key rule: lowercase, `-` -> `_`, then an exact match in SECRET_KEYS or a suffix _token/_secret/_password/_key (so `key_count`, `token_file`, `max_tokens` stay visible). */
export function isSecretKey(key: string): boolean {
  const k = key.toLowerCase().replaceAll("-", "_");
  return SECRET_KEYS.has(k) || SECRET_SUFFIXES.some((s) => k.endsWith(s));
}

// RFC 6750 b64token characters; the scheme name is case-insensitive.
const BEARER_RE = /\bBearer\s+[A-Za-z0-9\-._~+/]+=*/gi;

function redactString(s: string, secrets: readonly string[]): string {
  // Shorter than any Bearer match ("Bearer" + space + one char) or any secret.
  if (s.length < MIN_SECRET_LENGTH) return s;
  let out = s.replace(BEARER_RE, `Bearer ${REDACTED}`);
  for (const secret of secrets) {
    if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  return out;
}

/** Longest first, so a secret that contains another one is scrubbed whole. */
function secretList(secrets: ReadonlySet<string>): string[] {
  return [...secrets].filter((s) => s.length >= MIN_SECRET_LENGTH).sort((
    a,
    b,
  ) => b.length - a.length);
}

export interface RedactOptions {
  /** Include Error stacks (only sensible at debug level). */
  stacks?: boolean;
}

/**
 * Returns a JSON-safe deep copy of `value` with secret-named keys and secret
 * values replaced by "[redacted]". Errors become `{ name, message }` (plus
 * `cause`, and `stack` with `stacks`); cycles become "[cycle]".
 */
export function redact(
  value: unknown,
  secrets: ReadonlySet<string>,
  options: RedactOptions = {},
): unknown {
  return redactWith(value, secretList(secrets), options);
}

function redactWith(
  value: unknown,
  list: readonly string[],
  options: RedactOptions,
): unknown {
  // Ancestors only, so shared (non-cyclic) references are still copied in full.
  const ancestors = new Set<object>();

  const visit = (v: unknown): unknown => {
    switch (typeof v) {
      case "string":
        return redactString(v, list);
      case "bigint":
        return v.toString();
      case "symbol":
        return redactString(v.toString(), list);
      case "function":
        return `[function ${v.name || "anonymous"}]`;
      case "object":
        break;
      default:
        return v;
    }
    if (v === null) return null;
    if (ancestors.has(v)) return "[cycle]";
    ancestors.add(v);
    try {
      return visitObject(v);
    } finally {
      ancestors.delete(v);
    }
  };

  const visitObject = (v: object): unknown => {
    if (v instanceof Error) {
      const out: Record<string, unknown> = {
        name: visit(v.name),
        message: visit(v.message),
      };
      if ("code" in v && typeof v.code === "string") out.code = v.code;
      if (v.cause !== undefined) out.cause = visit(v.cause);
      if (options.stacks && v.stack !== undefined) out.stack = visit(v.stack);
      return out;
    }
    if (v instanceof Date) {
      return Number.isNaN(v.getTime()) ? "Invalid Date" : v.toISOString();
    }
    if (Array.isArray(v)) {
      return v.map((item) => (item === undefined ? null : visit(item)));
    }
    if (v instanceof Map) {
      return visitEntries([...v.entries()].map(([k, val]) => [String(k), val]));
    }
    if (v instanceof Set) return [...v].map(visit);
    if (ArrayBuffer.isView(v)) return `[${v.byteLength} bytes]`;
    if ("toJSON" in v && typeof v.toJSON === "function") {
      return visit(v.toJSON());
    }
    return visitEntries(Object.entries(v));
  };

  const visitEntries = (
    entries: [string, unknown][],
  ): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const [k, val] of entries) {
      if (val === undefined) continue;
      out[redactString(k, list)] = isSecretKey(k) ? REDACTED : visit(val);
    }
    return out;
  };

  return visit(value);
}

/**
 * `redact` for a record whose values are all primitives (most lines), with
 * the same output: no deep copy, no cycle tracking, keys looked up in
 * `keys`. Undefined when a value needs the general walk.
 */
function redactFlat(
  record: Record<string, unknown>,
  list: readonly string[],
  keys: Map<string, KeyVerdict>,
): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(record)) {
    const v = record[k];
    let value: unknown;
    switch (typeof v) {
      case "string":
        value = redactString(v, list);
        break;
      case "number":
      case "boolean":
        value = v;
        break;
      case "undefined":
        continue;
      case "bigint":
        value = v.toString();
        break;
      case "object":
        if (v !== null) return undefined;
        value = null;
        break;
      default:
        return undefined;
    }
    const verdict = keyVerdict(k, list, keys);
    out[verdict.name] = verdict.secret ? REDACTED : value;
  }
  return out;
}

interface KeyVerdict {
  /** The key as written (registered secrets scrubbed from it). */
  name: string;
  secret: boolean;
}

/** Distinct field names kept per logger tree; names may come from input. */
const KEY_CACHE_SIZE = 1024;

function keyVerdict(
  key: string,
  list: readonly string[],
  keys: Map<string, KeyVerdict>,
): KeyVerdict {
  let verdict = keys.get(key);
  if (verdict === undefined) {
    verdict = { name: redactString(key, list), secret: isSecretKey(key) };
    if (keys.size >= KEY_CACHE_SIZE) keys.clear();
    keys.set(key, verdict);
  }
  return verdict;
}

const RESERVED = new Set(["time", "level", "event"]);

interface Shared {
  minRank: number;
  debug: boolean;
  sink: (line: string, level: LogLevel) => void;
  clock: () => number;
  secrets: Set<string>;
  /** `secretList(secrets)`, kept at addSecret rather than sorted per line. */
  secretList: string[];
  /** Field names already judged against `secretList`; cleared when it changes. */
  keys: Map<string, KeyVerdict>;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? "info";
  const shared: Shared = {
    minRank: LEVEL_RANK[level],
    debug: level === "debug",
    sink: options.sink ?? stderrSink(),
    clock: options.clock ?? Date.now,
    secrets: new Set(),
    secretList: [],
    keys: new Map(),
  };
  return makeLogger(shared, options.base ?? {});
}

function makeLogger(shared: Shared, context: Record<string, unknown>): Logger {
  const emit = (
    level: LogLevel,
    event: string,
    fields?: Record<string, unknown>,
  ): void => {
    if (LEVEL_RANK[level] < shared.minRank) return;
    const record: Record<string, unknown> = {
      time: new Date(shared.clock()).toISOString(),
      level,
      event,
    };
    // Caller fields may not overwrite the envelope; keep them under "_<name>".
    // As `{ ...context, ...fields }` in that order, without building it.
    for (const k of Object.keys(context)) {
      record[RESERVED.has(k) ? `_${k}` : k] =
        fields !== undefined && Object.hasOwn(fields, k)
          ? fields[k]
          : context[k];
    }
    if (fields !== undefined) {
      for (const k of Object.keys(fields)) {
        if (Object.hasOwn(context, k)) continue;
        record[RESERVED.has(k) ? `_${k}` : k] = fields[k];
      }
    }
    // Redact at write time so secrets registered after child() still apply.
    const redacted = redactFlat(record, shared.secretList, shared.keys) ??
      redactWith(record, shared.secretList, { stacks: shared.debug });
    shared.sink(JSON.stringify(redacted), level);
  };
  return {
    debug: (event, fields) => emit("debug", event, fields),
    info: (event, fields) => emit("info", event, fields),
    warn: (event, fields) => emit("warn", event, fields),
    error: (event, fields) => emit("error", event, fields),
    child: (fields) => makeLogger(shared, { ...context, ...fields }),
    addSecret: (value) => {
      if (value.length < MIN_SECRET_LENGTH || shared.secrets.has(value)) {
        return;
      }
      shared.secrets.add(value);
      shared.secretList = secretList(shared.secrets);
      shared.keys.clear();
    },
  };
}

/**
 * Debug and info lines wait at most this long to go to stderr in one write
 * (each write is a syscall that wakes the reader: under load, one per turn
 * of the event loop was 2% of a busy daemon's main thread). A warn or error
 * line flushes the queue at once, as do exit (`unload`) and an uncaught error.
 */
export const STDERR_BATCH_MS = 20;
/** A queue this long is written at once, whatever its age. */
const STDERR_BATCH_LINES = 256;

/**
 * The lines not yet written, shared by every stderr logger, so the order
 * holds across them.
 */
const stderrQueue: {
  lines: string[];
  timer: ReturnType<typeof setTimeout> | undefined;
  hooked: boolean;
} = { lines: [], timer: undefined, hooked: false };

const stderrEncoder = new TextEncoder();

function flushStderr(): void {
  const queue = stderrQueue;
  if (queue.timer !== undefined) {
    clearTimeout(queue.timer);
    queue.timer = undefined;
  }
  if (queue.lines.length === 0) return;
  const bytes = stderrEncoder.encode(queue.lines.join(""));
  queue.lines = [];
  let written = 0;
  try {
    // writeSync may write partially (e.g. a full pipe); loop until done.
    while (written < bytes.length) {
      written += Deno.stderr.writeSync(bytes.subarray(written));
    }
  } catch {
    // stderr closed (EPIPE): logging must never take the daemon down.
  }
}

function stderrSink(): (line: string, level: LogLevel) => void {
  const queue = stderrQueue;
  if (!queue.hooked) {
    queue.hooked = true;
    globalThis.addEventListener("unload", flushStderr);
    globalThis.addEventListener("error", flushStderr);
    globalThis.addEventListener("unhandledrejection", flushStderr);
  }
  return (line, level) => {
    queue.lines.push(line + "\n");
    if (
      LEVEL_RANK[level] >= LEVEL_RANK.warn ||
      queue.lines.length >= STDERR_BATCH_LINES
    ) return flushStderr();
    if (queue.timer === undefined) {
      const timer = setTimeout(flushStderr, STDERR_BATCH_MS);
      // The flush must not keep the process alive; `unload` covers the end.
      Deno.unrefTimer(timer);
      queue.timer = timer;
    }
  };
}

/**
 * The URL without password, query or fragment (the user name stays: it says
 * which account): safe for logs and error text. `(invalid URL)` when it is none.
 */
export function publicUrl(url: string | URL): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "(invalid URL)";
  }
  parsed.password = "";
  parsed.search = "";
  parsed.hash = "";
  return parsed.toString();
}
