import assert from "node:assert/strict";
import {
  createLogger,
  isSecretKey,
  type LoggerOptions,
  redact,
} from "../../platform/log.ts";

function capture(options: LoggerOptions = {}) {
  const lines: string[] = [];
  const logger = createLogger({
    clock: () => Date.UTC(2024, 0, 2, 3, 4, 5),
    sink: (l) => lines.push(l),
    ...options,
  });
  const records = (): Record<string, unknown>[] =>
    lines.map((l) => JSON.parse(l));
  return { logger, lines, records };
}

Deno.test("log: one JSON object per line with time, level, event first", () => {
  const { logger, lines, records } = capture({ base: { app: "agentd" } });
  logger.info("server.started", { port: 8765 });
  logger.warn("multi\nline");
  assert.equal(lines.length, 2);
  for (const l of lines) assert.ok(!l.includes("\n"));
  assert.deepEqual(records()[0], {
    time: "2024-01-02T03:04:05.000Z",
    level: "info",
    event: "server.started",
    app: "agentd",
    port: 8765,
  });
  assert.deepEqual(Object.keys(records()[0]).slice(0, 3), [
    "time",
    "level",
    "event",
  ]);
  assert.equal(records()[1].event, "multi\nline");
});

Deno.test("log: level filtering", () => {
  const { logger, records } = capture({ level: "warn" });
  logger.debug("d");
  logger.info("i");
  logger.warn("w");
  logger.error("e");
  assert.deepEqual(records().map((r) => r.level), ["warn", "error"]);

  const dflt = capture();
  dflt.logger.debug("d");
  dflt.logger.info("i");
  assert.deepEqual(dflt.records().map((r) => r.event), ["i"]);
});

Deno.test("log: child fields stack and do not leak to the parent", () => {
  const { logger, records } = capture({ base: { pid: 1 } });
  const child = logger.child({ server: "memory" });
  const grandchild = child.child({ session: "s1", server: "memory2" });
  grandchild.info("call", { tool: "read" });
  logger.info("root");
  const [a, b] = records();
  assert.deepEqual({ ...a, time: undefined }, {
    time: undefined,
    level: "info",
    event: "call",
    pid: 1,
    server: "memory2",
    session: "s1",
    tool: "read",
  });
  assert.equal(b.server, undefined);
});

Deno.test("log: fields cannot overwrite the envelope", () => {
  const { logger, records } = capture();
  logger.info("real", { level: "fake", event: "fake", time: "fake" });
  const r = records()[0];
  assert.equal(r.level, "info");
  assert.equal(r.event, "real");
  assert.equal(r._level, "fake");
});

Deno.test("log: secret keys are redacted anywhere in nested objects and arrays", () => {
  const { logger, lines, records } = capture();
  logger.info("request", {
    headers: {
      Authorization: "Basic abc",
      "X-API-Key": "k1",
      "Set-Cookie": ["a=b"],
      accept: "json",
    },
    list: [{ password: "hunter2", user: "bob" }, {
      nested: { client_secret: "s", github_token: "gh" },
    }],
    key_count: 3,
    token_file: "/run/token",
    max_tokens: 10,
    key: "abc",
  });
  const r = records()[0];
  assert.deepEqual(r.headers, {
    Authorization: "[redacted]",
    "X-API-Key": "[redacted]",
    "Set-Cookie": "[redacted]",
    accept: "json",
  });
  assert.deepEqual(r.list, [
    { password: "[redacted]", user: "bob" },
    { nested: { client_secret: "[redacted]", github_token: "[redacted]" } },
  ]);
  assert.equal(r.key_count, 3);
  assert.equal(r.token_file, "/run/token");
  assert.equal(r.max_tokens, 10);
  assert.equal(r.key, "[redacted]");
  assert.ok(!lines[0].includes("hunter2"));
});

Deno.test("log: isSecretKey rule", () => {
  for (
    const k of [
      "token",
      "ACCESS_TOKEN",
      "api-key",
      "apikey",
      "x-api-key",
      "cookie",
      "credentials",
      "db_password",
    ]
  ) {
    assert.ok(isSecretKey(k), k);
  }
  for (
    const k of [
      "key_count",
      "token_file",
      "tokens",
      "keyboard",
      "monkey",
      "author",
      "session_id",
    ]
  ) {
    assert.ok(!isSecretKey(k), k);
  }
});

Deno.test("log: addSecret values and Bearer tokens are redacted in strings, including the event", () => {
  const { logger, lines, records } = capture();
  const child = logger.child({ server: "github" });
  child.addSecret("s3cr3t-value-123");
  child.addSecret("short"); // under 8 chars: ignored
  logger.info("using s3cr3t-value-123 now", {
    msg: "prefix-s3cr3t-value-123-suffix",
    header: "Bearer abc.def-ghi_jkl~+/==",
    short: "short",
    [`k-s3cr3t-value-123`]: 1,
  });
  const r = records()[0];
  assert.equal(r.event, "using [redacted] now");
  assert.equal(r.msg, "prefix-[redacted]-suffix");
  assert.equal(r.header, "Bearer [redacted]");
  assert.equal(r.short, "short");
  assert.equal(r["k-[redacted]"], 1);
  assert.ok(!lines[0].includes("s3cr3t"));
  assert.ok(!lines[0].includes("abc.def"));
});

Deno.test("log: cycles become [cycle]; shared references are kept", () => {
  const { logger, records } = capture();
  const a: Record<string, unknown> = { name: "a" };
  a.self = a;
  const shared = { x: 1 };
  const arr: unknown[] = [shared, shared];
  arr.push(arr);
  logger.info("cyclic", { a, arr });
  const r = records()[0];
  assert.deepEqual(r.a, { name: "a", self: "[cycle]" });
  assert.deepEqual(r.arr, [{ x: 1 }, { x: 1 }, "[cycle]"]);
});

Deno.test("log: Error objects become name/message; stacks only at debug", () => {
  const info = capture();
  const err = new TypeError("bad token s3cr3t-value-123", {
    cause: new Error("inner"),
  });
  info.logger.addSecret("s3cr3t-value-123");
  info.logger.error("failed", { err });
  assert.deepEqual(info.records()[0].err, {
    name: "TypeError",
    message: "bad token [redacted]",
    cause: { name: "Error", message: "inner" },
  });

  const debug = capture({ level: "debug" });
  debug.logger.error("failed", { err: new Error("x") });
  const e = debug.records()[0].err;
  assert.ok(
    typeof e === "object" && e !== null && "stack" in e &&
      typeof e.stack === "string",
  );
});

Deno.test("redact: JSON-unfriendly values", () => {
  const out = redact({
    big: 10n,
    date: new Date(0),
    fn: function named() {},
    undef: undefined,
    map: new Map([["token", "x"], ["a", "b"]]),
    set: new Set([1]),
    bytes: new Uint8Array(4),
    url: new URL("https://example.com/?q=1"),
  }, new Set());
  assert.deepEqual(out, {
    big: "10",
    date: "1970-01-01T00:00:00.000Z",
    fn: "[function named]",
    map: { token: "[redacted]", a: "b" },
    set: [1],
    bytes: "[4 bytes]",
    url: "https://example.com/?q=1",
  });
});

Deno.test("log: default sink writes to stderr, not stdout", async () => {
  const code = `
    import { createLogger } from ${
    JSON.stringify(new URL("../../platform/log.ts", import.meta.url).href)
  };
    createLogger().info("hello", { n: 1 });
  `;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", code],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0);
  assert.equal(new TextDecoder().decode(out.stdout), "");
  const line = new TextDecoder().decode(out.stderr);
  assert.ok(line.endsWith("\n"));
  assert.equal(JSON.parse(line).event, "hello");
});

Deno.test("log: stderr lines arrive in order and none is lost at Deno.exit, a natural end, or an uncaught error", async () => {
  const log = new URL("../../platform/log.ts", import.meta.url).href;
  const endings: Record<string, string> = {
    exit: "Deno.exit(3);",
    end: "",
    throw: 'setTimeout(() => { throw new Error("boom"); }, 0);',
  };
  for (const [ending, code] of Object.entries(endings)) {
    const script = `import { createLogger } from ${JSON.stringify(log)};
const a = createLogger(); const b = createLogger({ base: { b: 1 } });
a.info("one"); b.info("two"); a.warn("three"); a.info("four");
await Promise.resolve(); b.info("five");
${code}`;
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["eval", "--no-check", script],
      stdout: "null",
      stderr: "piped",
    }).output();
    const events = new TextDecoder().decode(output.stderr).split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line).event);
    assert.deepEqual(
      events,
      ["one", "two", "three", "four", "five"],
      `${ending}: ${new TextDecoder().decode(output.stderr)}`,
    );
    if (ending === "exit") assert.equal(output.code, 3);
    if (ending === "throw") assert.notEqual(output.code, 0);
  }
});

Deno.test("log: flat records (the fast path) are written byte for byte as the general redact writes them", () => {
  const secrets = ["s3cr3t-value", "s3cr3t-value-longer", "12345678"];
  const flat: Record<string, unknown>[] = [
    {
      port: 8765,
      ok: true,
      none: null,
      gone: undefined,
      n: NaN,
      inf: -Infinity,
    },
    { zero: -0, big: 12n, empty: "", short: "Bearer", seven: "1234567" },
    { exact: "12345678", inside: "x12345678y", both: "s3cr3t-value-longer!" },
    {
      header: "bearer\tabc.DEF-_~+/==",
      two: "Bearer a Bearer b",
      b: "Bearerx y",
    },
    { Authorization: "Basic x", "X-Api-Key": 1, my_token: null, max_tokens: 5 },
    { token_file: "/t", key_count: 2, secret: undefined, PASSWORD: false },
    { time: "forged", level: 1, event: "e", _time: "mine", _level: undefined },
    { "s3cr3t-value": "key holds a secret", "Bearer abcdefgh": 1 },
    { "12345678": "a", "12345678x": "b", "x12345678": "c" }, // collide once scrubbed
    { "2": "integer keys", "1": "come first", "-1": "not this one" },
    { unicode: "héllo ✓ \u2028 s3cr3t-value \ud800", "\n": "\u0000" },
  ];
  const nested: Record<string, unknown>[] = [
    { obj: { token: "x", n: 1 } },
    { list: [1, "s3cr3t-value", { password: "p" }] },
    { token: { deep: 1 }, date: new Date(0) },
    { err: new Error("Bearer abcdefgh") },
    { sym: Symbol("s"), fn: () => 1 },
  ];
  const proto = JSON.parse('{"__proto__": "plain", "after": 1}');
  for (const [i, fields] of [...flat, ...nested, proto].entries()) {
    for (const base of [{}, { app: "agentd", token: "t", time: "base" }]) {
      const { logger, lines } = capture({ base });
      for (const secret of secrets) logger.addSecret(secret);
      logger.info("event s3cr3t-value", fields);
      const record: Record<string, unknown> = {
        time: "2024-01-02T03:04:05.000Z",
        level: "info",
        event: "event s3cr3t-value",
      };
      for (const [k, v] of Object.entries({ ...base, ...fields })) {
        record[["time", "level", "event"].includes(k) ? `_${k}` : k] = v;
      }
      const general = JSON.stringify(redact(record, new Set(secrets)));
      assert.equal(lines[0], general, `case ${i}`);
    }
  }
});

Deno.test("log: a secret added after a field name was seen still scrubs that name", () => {
  const { logger, lines } = capture();
  logger.info("a", { "id-abcdefgh-1": 1 });
  logger.addSecret("abcdefgh");
  logger.info("b", { "id-abcdefgh-1": 1 });
  const child = logger.child({ c: 1 });
  logger.addSecret("id-abcdefgh-1-longer");
  child.info("c", { "id-abcdefgh-1": 2 });
  assert.ok(lines[0].includes('"id-abcdefgh-1":1'));
  assert.ok(lines[1].includes('"id-[redacted]-1":1'), lines[1]);
  assert.ok(lines[2].includes('"id-[redacted]-1":2'), lines[2]);
});
