import assert from "node:assert/strict";
import { z } from "zod";
import {
  buildConfigSchema,
  loadConfig,
  readBaseConfig,
} from "../../platform/config.ts";
import {
  ConfigError,
  type ConfigSources,
} from "../../platform/config_merge.ts";

const memory = z.object({
  storage: z.enum(["kv", "memory"]).default("kv"),
  max_entries: z.number().int().positive().optional(),
  persist: z.boolean().optional(),
  tags: z.array(z.string()).optional(),
  limits: z.object({ bytes: z.number() }).optional(),
});
const browser = z.object({
  cdp_port: z.number().int().optional(),
  headless: z.boolean().default(true),
});
const schema = buildConfigSchema({ memory, "browser-automation": browser });

const tmpDir = Deno.makeTempDirSync({ prefix: "agentd-config-test-" });
globalThis.addEventListener("unload", () => {
  Deno.removeSync(tmpDir, { recursive: true });
});
let fileCount = 0;

async function tempFile(content: string): Promise<string> {
  const path = `${tmpDir}/file${fileCount++}.json`;
  await Deno.writeTextFile(path, content);
  return path;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null;
}

function sources(partial: Partial<ConfigSources>): ConfigSources {
  return { env: {}, flags: {}, ...partial };
}

async function loadError(s: ConfigSources): Promise<ConfigError> {
  try {
    await loadConfig(schema, s);
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    return err;
  }
  assert.fail("expected a ConfigError");
}

Deno.test("config: defaults only", async () => {
  const loaded = await loadConfig(schema, sources({}));
  assert.deepEqual(loaded.values, {
    host: "127.0.0.1",
    port: 8765,
    agent_tokens: {},
    allowed_hosts: [],
    allowed_origins: [],
    max_body_bytes: 1048576,
    log_level: "info",
    shutdown_timeout_ms: 30000,
    session_idle_timeout_ms: 300000,
    session_max: 1000,
    session_max_per_agent: 100,
  });
  assert.equal(loaded.file, undefined);
  assert.equal(loaded.origin.port, "default");
  assert.deepEqual(readBaseConfig(loaded.values).port, 8765);
});

Deno.test("config: precedence file < env < flags, and the origin map", async () => {
  const file = await tempFile(
    JSON.stringify({ port: 1000, host: "0.0.0.0", log_level: "warn" }),
  );
  const loaded = await loadConfig(schema, {
    file,
    env: { AGENTD_PORT: "2000", AGENTD_LOG_LEVEL: "debug" },
    flags: { port: 3000 },
  });
  assert.equal(loaded.values.port, 3000);
  assert.equal(loaded.values.log_level, "debug");
  assert.equal(loaded.values.host, "0.0.0.0");
  assert.equal(loaded.file, file);
  assert.deepEqual(loaded.origin, {
    host: "file",
    port: "flag",
    agent_tokens: "default",
    allowed_hosts: "default",
    allowed_origins: "default",
    max_body_bytes: "default",
    log_level: "env",
    shutdown_timeout_ms: "default",
    session_idle_timeout_ms: "default",
    session_max: "default",
    session_max_per_agent: "default",
  });

  const envOverFile = await loadConfig(
    schema,
    sources({ file, env: { AGENTD_PORT: "2000" } }),
  );
  assert.equal(envOverFile.values.port, 2000);
});

Deno.test("config: env coercion of numbers, arrays and booleans; unknown AGENTD_* ignored", async () => {
  const loaded = await loadConfig(
    schema,
    sources({
      env: {
        AGENTD_MAX_BODY_BYTES: "2048",
        AGENTD_ALLOWED_HOSTS: "localhost, example.com,,",
        AGENTD_SERVERS: "memory",
        AGENTD_MEMORY__PERSIST: "0",
        AGENTD_BROWSER_AUTOMATION__HEADLESS: "FALSE",
        AGENTD_BROWSER_AUTOMATION__CDP_PORT: "9222",
        AGENTD_CONFIG: "/ignored.json",
        AGENTD_NOT_A_KEY: "x",
        AGENTD_DATA_DIR: "",
      },
    }),
  );
  const base = readBaseConfig(loaded.values);
  assert.equal(base.max_body_bytes, 2048);
  assert.deepEqual(base.allowed_hosts, ["localhost", "example.com"]);
  assert.deepEqual(base.servers, ["memory"]);
  assert.equal(base.data_dir, undefined);
  assert.deepEqual(loaded.values.memory, { storage: "kv", persist: false });
  assert.deepEqual(loaded.values["browser-automation"], {
    headless: false,
    cdp_port: 9222,
  });
  assert.equal(loaded.origin.memory, "env");
});

Deno.test("config: bad values from env name the variable and show the raw text", async () => {
  const err = await loadError(sources({
    env: {
      AGENTD_PORT: "abc",
      AGENTD_MEMORY__PERSIST: "maybe",
      AGENTD_SHUTDOWN_TIMEOUT_MS: "-1",
    },
  }));
  assert.deepEqual(err.problems.toSorted(), [
    'env AGENTD_MEMORY__PERSIST: expected boolean, got "maybe"',
    'env AGENTD_PORT: expected an integer from 0 to 65535, got "abc"',
    'env AGENTD_SHUTDOWN_TIMEOUT_MS: expected a non-negative integer, got "-1"',
  ]);
  assert.match(
    err.message,
    /env AGENTD_PORT: expected an integer from 0 to 65535, got "abc"/,
  );

  const big = await loadError(sources({ env: { AGENTD_PORT: "70000" } }));
  assert.deepEqual(big.problems, [
    'env AGENTD_PORT: expected an integer from 0 to 65535, got "70000"',
  ]);
});

Deno.test("config: unknown keys in the file are named, at every level", async () => {
  const file = await tempFile(
    JSON.stringify({
      prot: 1,
      memory: { storag: "kv", limits: { bytes: 1, extra: 2 } },
    }),
  );
  const err = await loadError(sources({ file }));
  assert.deepEqual(err.problems.toSorted(), [
    `file ${file} memory.limits.extra: unknown key`,
    `file ${file} memory.storag: unknown key`,
    `file ${file} prot: unknown key`,
  ]);
});

Deno.test("config: invalid values in the file name the file and path", async () => {
  const file = await tempFile(
    JSON.stringify({
      port: 1.5,
      allowed_hosts: ["a", 7],
      token: "short-secret",
    }),
  );
  const err = await loadError(sources({ file }));
  assert.deepEqual(err.problems, [
    `file ${file} port: expected an integer from 0 to 65535, got 1.5`,
    `file ${file} token: expected at least 16 characters`,
    `file ${file} allowed_hosts[1]: expected string, got 7`,
  ]);
  assert.ok(!err.message.includes("short-secret"));
});

Deno.test("config: file problems (missing, invalid JSON, not an object)", async () => {
  const missing = await loadError(
    sources({ file: "/nonexistent/agentd.json" }),
  );
  assert.equal(
    missing.message,
    "config file /nonexistent/agentd.json: not found",
  );

  const bad = await tempFile("{ port: 1 ");
  const invalid = await loadError(sources({ file: bad }));
  assert.match(
    invalid.message,
    new RegExp(`^config file ${bad}: invalid JSON: `),
  );

  const leaky = await tempFile('{"token": secret-token-value-123}');
  const noLeak = await loadError(sources({ file: leaky }));
  assert.match(noLeak.message, /invalid JSON: Unexpected token/);
  assert.ok(!noLeak.message.includes("secret-token"), noLeak.message);

  const arr = await tempFile("[1]");
  const notObject = await loadError(sources({ file: arr }));
  assert.equal(
    notObject.message,
    `config file ${arr}: expected a JSON object`,
  );
});

Deno.test("config: defaultFile is read only when it exists; explicit file wins", async () => {
  const none = await loadConfig(
    schema,
    sources({ defaultFile: "/nonexistent/agentd.json" }),
  );
  assert.equal(none.file, undefined);

  const dflt = await tempFile("\uFEFF" + JSON.stringify({ port: 1111 }));
  const used = await loadConfig(schema, sources({ defaultFile: dflt }));
  assert.equal(used.file, dflt);
  assert.equal(used.values.port, 1111);

  const explicit = await tempFile(JSON.stringify({ port: 2222 }));
  const both = await loadConfig(
    schema,
    sources({ file: explicit, defaultFile: dflt }),
  );
  assert.equal(both.file, explicit);
  assert.equal(both.values.port, 2222);
});

Deno.test("config: server section via file, env and flags merge per key", async () => {
  const file = await tempFile(
    JSON.stringify({
      memory: { storage: "memory", max_entries: 10, tags: ["a"] },
    }),
  );
  const loaded = await loadConfig(schema, {
    file,
    env: {
      AGENTD_MEMORY__MAX_ENTRIES: "20",
      AGENTD_MEMORY__TAGS: "x,y",
      AGENTD_MEMORY__LIMITS: '{"bytes":5}',
    },
    flags: {
      memory: { storage: "kv" },
      "browser-automation": { cdp_port: "9333" },
    },
  });
  assert.deepEqual(loaded.values.memory, {
    storage: "kv",
    max_entries: 20,
    tags: ["x", "y"],
    limits: { bytes: 5 },
  });
  assert.deepEqual(loaded.values["browser-automation"], {
    cdp_port: 9333,
    headless: true,
  });
  assert.equal(loaded.origin.memory, "flag");
  assert.equal(loaded.origin["browser-automation"], "flag");

  const err = await loadError(
    sources({
      env: { AGENTD_MEMORY__STORAGE: "disk" },
      flags: { nope: 1, memory: { x: 1 } },
    }),
  );
  assert.equal(err.problems.length, 3);
  assert.match(err.problems[0], /^env AGENTD_MEMORY__STORAGE: .*got "disk"$/);
  assert.deepEqual(err.problems.slice(1).toSorted(), [
    "flag memory.x: unknown key",
    "flag nope: unknown key",
  ]);
});

Deno.test("config: flags arrive as strings from the CLI and are coerced", async () => {
  const loaded = await loadConfig(
    schema,
    sources({
      flags: {
        port: "4000",
        allowed_origins: ["http://a", "http://b"],
        data_dir: "/d",
        host: undefined,
      },
    }),
  );
  assert.equal(loaded.values.port, 4000);
  assert.deepEqual(loaded.values.allowed_origins, ["http://a", "http://b"]);
  assert.equal(loaded.values.data_dir, "/d");
  assert.equal(loaded.values.host, "127.0.0.1");
  const err = await loadError(sources({ flags: { port: "x" } }));
  assert.deepEqual(err.problems, [
    'flag port: expected an integer from 0 to 65535, got "x"',
  ]);
});

Deno.test("config: token_file is read (trimmed) when token is not set", async () => {
  const tokenFile = await tempFile("  0123456789abcdef-token\n");
  const loaded = await loadConfig(
    schema,
    sources({ env: { AGENTD_TOKEN_FILE: tokenFile } }),
  );
  assert.equal(loaded.values.token, "0123456789abcdef-token");
  assert.equal(loaded.values.token_file, tokenFile);
  assert.equal(loaded.origin.token, "env");

  const explicit = await loadConfig(
    schema,
    sources({ flags: { token: "x".repeat(20), token_file: tokenFile } }),
  );
  assert.equal(explicit.values.token, "x".repeat(20));

  const missing = await loadError(
    sources({ flags: { token_file: "/nonexistent/token" } }),
  );
  assert.deepEqual(missing.problems, [
    "flag token_file: token file /nonexistent/token: not found",
  ]);

  const shortFile = await tempFile("tooshort-secret\n");
  const short = await loadError(sources({ flags: { token_file: shortFile } }));
  assert.deepEqual(short.problems, [
    `token_file ${shortFile}: expected at least 16 characters`,
  ]);
  assert.ok(!short.message.includes("tooshort-secret"));
});

Deno.test("config: readBaseConfig gives a typed view and drops server sections", async () => {
  const loaded = await loadConfig(schema, sources({ flags: { memory: {} } }));
  const base = readBaseConfig(loaded.values);
  assert.equal(base.host, "127.0.0.1");
  assert.equal("memory" in base, false);
  assert.throws(() => readBaseConfig({ port: "x" }), ConfigError);
});

Deno.test("config: a server id may not shadow a daemon key", () => {
  assert.throws(() => buildConfigSchema({ port: z.object({}) }), /collides/);
});

Deno.test("config: strict server sections keep defaults fresh per load and metadata", async () => {
  const section = z.object({
    list: z.array(z.string()).default([]),
    nested: z.object({ n: z.number().default(1) }).default({ n: 1 }),
  }).describe("my section");
  const s = buildConfigSchema({ svc: section });
  const a = await loadConfig(s, sources({ flags: { svc: { nested: {} } } }));
  const b = await loadConfig(s, sources({ flags: { svc: { nested: {} } } }));
  assert.deepEqual(a.values.svc, { list: [], nested: { n: 1 } });
  const list = (v: unknown) => isRecord(v) ? v.list : undefined;
  assert.ok(Array.isArray(list(a.values.svc)));
  assert.notEqual(list(a.values.svc), list(b.values.svc));
  const inner = s.shape.svc;
  assert.ok(inner instanceof z.ZodOptional);
  const unwrapped = inner.unwrap();
  assert.ok(unwrapped instanceof z.ZodObject);
  assert.equal(unwrapped.description, "my section");
});
