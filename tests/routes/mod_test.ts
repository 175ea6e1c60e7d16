// The HTTP face through `app.request()` (no sockets): the Host, Origin, body
// size and token guards, the JSON error shape, /health and /mcp routing.

import assert from "node:assert/strict";
import type { Hono } from "hono";
import { z } from "zod";
import { createLogger } from "../../platform/log.ts";
import { MemoryStore } from "../../platform/store/memory.ts";
import { type AppEnv, type AppOptions, createApp } from "../../routes/mod.ts";
import { HostedServer } from "../../tools/kit/host.ts";
import { defineServer, text, toolDefiner } from "../../tools/kit/mod.ts";
import { McpHttpEndpoint } from "../../tools/kit/transport/http_server.ts";
import { capturedLog, type LogLine } from "../helpers.ts";

const VERSION = "1.2.3";
const LIMIT = 256;
const TOKEN = "s3cret-token-0123456789";
const ACCEPT = "application/json, text/event-stream";

const tool = toolDefiner<null>();

function tinySpec(id: string, fail?: string) {
  return defineServer<null>({
    id,
    namespace: `svc-${id}`,
    title: `Tiny ${id}`,
    version: "0.0.1",
    tools: [tool({
      name: "echo",
      description: "Echoes its text.",
      input: z.object({ text: z.string() }),
      handle: (_ctx, args) => Promise.resolve(text(args.text)),
    })],
    start: () =>
      fail === undefined
        ? Promise.resolve({ context: null })
        : Promise.reject(new Error(fail)),
  });
}

interface Fixture {
  hosts: HostedServer[];
  endpoints: Map<string, McpHttpEndpoint>;
  logs: LogLine[];
  /** An app over these hosts; `overrides` change the guard settings. */
  app(overrides?: Partial<AppOptions>): Hono<AppEnv>;
}

/** Starts one host per spec (`tiny`, `other`, ... with an optional start failure). */
async function withHosts(
  servers: { id: string; fail?: string }[],
  body: (fixture: Fixture) => Promise<void>,
): Promise<void> {
  const { log, logs } = capturedLog();
  const store = new MemoryStore();
  const hosts: HostedServer[] = [];
  const endpoints = new Map<string, McpHttpEndpoint>();
  try {
    for (const { id, fail } of servers) {
      const host = await HostedServer.start(tinySpec(id, fail), {
        store,
        log,
        config: {},
        dataDir: "/nonexistent/agentd-routes-test",
      });
      hosts.push(host);
      endpoints.set(
        id,
        new McpHttpEndpoint(host, { log, idleTimeoutMs: 60_000 }),
      );
    }
    const startedAt = Date.now() - 5_000;
    await body({
      hosts,
      endpoints,
      logs,
      app: (overrides = {}) =>
        createApp({
          hosts,
          endpoints,
          layout: "daemon",
          bindHost: "127.0.0.1",
          allowedHosts: [],
          allowedOrigins: [],
          maxBodyBytes: LIMIT,
          version: VERSION,
          startedAt,
          log,
          ...overrides,
        }),
    });
  } finally {
    for (const endpoint of endpoints.values()) await endpoint.close();
    for (const host of hosts) await host.stop(1_000);
    await store.close();
  }
}

/** GET (or `init.method`) with a loopback Host unless `init.headers` says otherwise. */
function send(
  app: Hono<AppEnv>,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: BodyInit } =
    {},
): Promise<Response> {
  const headers = new Headers({ host: "127.0.0.1:8765", ...init.headers });
  return Promise.resolve(
    app.request(
      new Request(`http://127.0.0.1:8765${path}`, {
        method: init.method ?? "GET",
        headers,
        body: init.body,
      }),
    ),
  );
}

/** GET /health with exactly these headers (no default Host). */
function bare(
  app: Hono<AppEnv>,
  headers: Record<string, string>,
): Promise<Response> {
  return Promise.resolve(
    app.request(new Request("http://127.0.0.1:8765/health", { headers })),
  );
}

async function statusFor(
  app: Hono<AppEnv>,
  host: string,
): Promise<number> {
  const response = await bare(app, { host });
  await response.body?.cancel();
  return response.status;
}

async function expectError(
  response: Response,
  status: number,
  error: { code: string; message: string; details?: unknown },
): Promise<void> {
  assert.equal(response.status, status);
  assert.match(response.headers.get("content-type") ?? "", /application\/json/);
  assert.deepEqual(await response.json(), { error });
}

/** A JSON-RPC ping padded with spaces to exactly `size` bytes. */
function pingOfSize(size: number): string {
  const ping = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "ping" });
  assert.ok(size >= ping.length);
  return ping + " ".repeat(size - ping.length);
}

function streamOf(body: string, chunk = 50): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(body);
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) {
        controller.close();
        return;
      }
      controller.enqueue(bytes.slice(offset, offset + chunk));
      offset += chunk;
    },
  });
}

const MCP_HEADERS = { "content-type": "application/json", accept: ACCEPT };

Deno.test("routes: hostGuard on a loopback bind accepts loopback names only", async () => {
  await withHosts([{ id: "tiny" }], async ({ app }) => {
    const loopback = app();
    for (
      const host of [
        "localhost",
        "localhost:8765",
        "LocalHost:8765",
        "127.0.0.1",
        "127.0.0.1:8765",
        "[::1]",
        "[::1]:8765",
      ]
    ) {
      assert.equal(await statusFor(loopback, host), 200, host);
    }
    for (
      const host of [
        "evil.com",
        "evil.com:8765",
        "localhost.evil.com",
        "127.0.0.1.nip.io",
        "192.168.1.20",
        "",
        "not a host",
        "[::1",
      ]
    ) {
      assert.equal(await statusFor(loopback, host), 403, JSON.stringify(host));
    }
    await expectError(await bare(loopback, { host: "evil.com:8765" }), 403, {
      code: "forbidden",
      message:
        'Host "evil.com:8765" is not allowed. Use localhost, or add the name to allowed_hosts.',
    });
    // No Host header at all.
    await expectError(await bare(loopback, {}), 403, {
      code: "forbidden",
      message:
        'Host "" is not allowed. Use localhost, or add the name to allowed_hosts.',
    });

    const named = app({ allowedHosts: ["agentd.example.com"] });
    assert.equal(await statusFor(named, "agentd.example.com:8765"), 200);
    assert.equal(await statusFor(named, "AGENTD.example.com"), 200);
    assert.equal(await statusFor(named, "localhost:8765"), 200);
    assert.equal(await statusFor(named, "other.example.com"), 403);
  });
});

Deno.test("routes: hostGuard on a specific or wildcard address", async () => {
  await withHosts([{ id: "tiny" }], async ({ app }) => {
    const lan = app({ bindHost: "192.168.1.20" });
    assert.equal(await statusFor(lan, "192.168.1.20:8765"), 200);
    assert.equal(await statusFor(lan, "192.168.1.20"), 200);
    assert.equal(await statusFor(lan, "localhost:8765"), 200);
    assert.equal(await statusFor(lan, "192.168.1.21:8765"), 403);
    assert.equal(await statusFor(lan, "evil.com"), 403);

    // An IPv6 address is written bare in config but bracketed in Host.
    const lan6 = app({ bindHost: "fd00::20" });
    assert.equal(await statusFor(lan6, "[fd00::20]:8765"), 200);
    assert.equal(await statusFor(lan6, "[FD00:0::20]"), 200);
    assert.equal(await statusFor(lan6, "[fd00::21]:8765"), 403);
    const listed6 = app({ allowedHosts: ["FD00:0:0::30", "[fd00::31]"] });
    assert.equal(await statusFor(listed6, "[fd00::30]:8765"), 200);
    assert.equal(await statusFor(listed6, "[fd00::31]"), 200);
    assert.equal(await statusFor(listed6, "[fd00::20]"), 403);

    for (const bindHost of ["0.0.0.0", "::"]) {
      const open = app({ bindHost });
      assert.equal(await statusFor(open, "evil.com"), 200, bindHost);
      assert.equal(await statusFor(open, "10.0.0.7:8765"), 200, bindHost);
      assert.equal(await statusFor(open, "not a host"), 403, bindHost);
      assert.equal((await bare(open, {})).status, 403, bindHost);

      const listed = app({ bindHost, allowedHosts: ["agentd.lan"] });
      assert.equal(await statusFor(listed, "agentd.lan:8765"), 200, bindHost);
      assert.equal(await statusFor(listed, "localhost:8765"), 200, bindHost);
      assert.equal(await statusFor(listed, "127.0.0.1"), 200, bindHost);
      assert.equal(await statusFor(listed, "evil.com"), 403, bindHost);
      assert.equal(await statusFor(listed, "10.0.0.7"), 403, bindHost);
    }
  });
});

Deno.test("routes: originGuard lets loopback and listed origins through", async () => {
  await withHosts([{ id: "tiny" }], async ({ app }) => {
    const guarded = app();
    const statusOf = async (origin?: string) => {
      const response = await send(guarded, "/health", {
        headers: origin === undefined ? {} : { origin },
      });
      await response.body?.cancel();
      return response.status;
    };
    assert.equal(await statusOf(), 200);
    for (
      const origin of [
        "http://localhost:3000",
        "https://localhost",
        "http://127.0.0.1:8765",
        "http://[::1]:5173",
        "HTTP://LOCALHOST:3000",
      ]
    ) {
      assert.equal(await statusOf(origin), 200, origin);
    }
    for (
      const origin of [
        "null",
        "https://evil.com",
        "http://localhost.evil.com",
        "ws://localhost:3000",
        "file://",
        "chrome-extension://abcdef",
      ]
    ) {
      assert.equal(await statusOf(origin), 403, origin);
    }
    await expectError(
      await send(guarded, "/health", { headers: { origin: "null" } }),
      403,
      {
        code: "forbidden",
        message:
          'Origin "null" is not allowed. Add it to allowed_origins to let that page call agentd.',
      },
    );

    const extension = app({
      allowedOrigins: ["chrome-extension://abcdef", "https://app.example.com"],
    });
    for (
      const origin of [
        "chrome-extension://abcdef",
        "https://app.example.com",
        "http://localhost:3000",
      ]
    ) {
      const response = await send(extension, "/health", {
        headers: { origin },
      });
      await response.body?.cancel();
      assert.equal(response.status, 200, origin);
    }
    const other = await send(extension, "/health", {
      headers: { origin: "chrome-extension://zzzzzz" },
    });
    await other.body?.cancel();
    assert.equal(other.status, 403);
  });
});

Deno.test("routes: bodyGuard passes exactly the limit and rejects one byte more (Content-Length and streamed)", async () => {
  await withHosts([{ id: "tiny" }], async ({ app }) => {
    const guarded = app();
    const tooLarge = {
      code: "payload_too_large",
      message: `Request body too large: the limit is ${LIMIT} bytes`,
      details: { limit_bytes: LIMIT },
    };

    const exact = await send(guarded, "/mcp/tiny", {
      method: "POST",
      headers: { ...MCP_HEADERS, "content-length": String(LIMIT) },
      body: pingOfSize(LIMIT),
    });
    assert.equal(exact.status, 200);
    assert.deepEqual(await exact.json(), { jsonrpc: "2.0", id: 7, result: {} });

    await expectError(
      await send(guarded, "/mcp/tiny", {
        method: "POST",
        headers: { ...MCP_HEADERS, "content-length": String(LIMIT + 1) },
        body: pingOfSize(LIMIT + 1),
      }),
      413,
      tooLarge,
    );

    const streamed = await send(guarded, "/mcp/tiny", {
      method: "POST",
      headers: MCP_HEADERS,
      body: streamOf(pingOfSize(LIMIT)),
    });
    assert.equal(streamed.status, 200);
    assert.deepEqual(await streamed.json(), {
      jsonrpc: "2.0",
      id: 7,
      result: {},
    });

    await expectError(
      await send(guarded, "/mcp/tiny", {
        method: "POST",
        headers: MCP_HEADERS,
        body: streamOf(pingOfSize(LIMIT + 1)),
      }),
      413,
      tooLarge,
    );
  });
});

Deno.test("routes: the bearer token guards every path, /health included", async () => {
  await withHosts([{ id: "tiny" }], async ({ app, logs }) => {
    const guarded = app({ token: TOKEN });
    const missing = await send(guarded, "/health");
    assert.match(missing.headers.get("www-authenticate") ?? "", /^Bearer /);
    await expectError(missing, 401, {
      code: "unauthorized",
      message: "Missing bearer token: send Authorization: Bearer <token>",
    });
    await expectError(
      await send(guarded, "/health", {
        headers: { authorization: "Bearer wrong-token-0123456789" },
      }),
      401,
      { code: "unauthorized", message: "Invalid bearer token" },
    );
    await expectError(
      await send(guarded, "/health", {
        headers: { authorization: `Bearer ${TOKEN}x` },
      }),
      401,
      { code: "unauthorized", message: "Invalid bearer token" },
    );
    for (
      const authorization of [
        `Basic ${TOKEN}`,
        "Bearer",
        `Bearer ${TOKEN} extra`,
        TOKEN,
      ]
    ) {
      await expectError(
        await send(guarded, "/health", { headers: { authorization } }),
        400,
        {
          code: "invalid_request",
          message: "Malformed Authorization header: expected Bearer <token>",
        },
      );
    }

    const ok = await send(guarded, "/health", {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(ok.status, 200);
    assert.equal((await ok.json()).status, "ok");

    const mcp = await send(guarded, "/mcp/tiny", {
      method: "POST",
      headers: { ...MCP_HEADERS, authorization: `Bearer ${TOKEN}` },
      body: pingOfSize(60),
    });
    assert.equal(mcp.status, 200);
    assert.deepEqual(await mcp.json(), { jsonrpc: "2.0", id: 7, result: {} });
    const mcpWithout = await send(guarded, "/mcp/tiny", {
      method: "POST",
      headers: MCP_HEADERS,
      body: pingOfSize(60),
    });
    await mcpWithout.body?.cancel();
    assert.equal(mcpWithout.status, 401);

    // Unknown paths are not a way to probe without a token.
    const unknown = await send(guarded, "/nowhere");
    await unknown.body?.cancel();
    assert.equal(unknown.status, 401);
    // The Host check runs first.
    await expectError(
      await bare(guarded, { host: "evil.com" }),
      403,
      {
        code: "forbidden",
        message:
          'Host "evil.com" is not allowed. Use localhost, or add the name to allowed_hosts.',
      },
    );

    // Without a configured token nothing asks for one.
    const open = await send(app(), "/health");
    await open.body?.cancel();
    assert.equal(open.status, 200);

    assert.ok(!JSON.stringify(logs).includes(TOKEN));
  });
});

Deno.test("routes: 404s have the JSON shape; /mcp/<unknown> lists the enabled servers", async () => {
  await withHosts([{ id: "tiny" }, { id: "other" }], async ({ app }) => {
    const daemon = app();
    await expectError(await send(daemon, "/nowhere"), 404, {
      code: "not_found",
      message: "Nothing at GET /nowhere",
    });
    await expectError(
      await send(daemon, "/mcp/ghost", {
        method: "POST",
        headers: MCP_HEADERS,
        body: pingOfSize(60),
      }),
      404,
      {
        code: "not_found",
        message: 'No MCP server "ghost" here. Enabled: tiny, other',
        details: { enabled: ["tiny", "other"] },
      },
    );
    const reached = await send(daemon, "/mcp/other", {
      method: "POST",
      headers: MCP_HEADERS,
      body: pingOfSize(60),
    });
    assert.equal(reached.status, 200);
    assert.deepEqual(await reached.json(), {
      jsonrpc: "2.0",
      id: 7,
      result: {},
    });

    // One server alone: it answers at /mcp, and /mcp/<id> is nothing.
    const single = app({ layout: "single" });
    const alone = await send(single, "/mcp", {
      method: "POST",
      headers: MCP_HEADERS,
      body: pingOfSize(60),
    });
    assert.equal(alone.status, 200);
    assert.deepEqual(await alone.json(), { jsonrpc: "2.0", id: 7, result: {} });
    await expectError(await send(single, "/mcp/tiny"), 404, {
      code: "not_found",
      message: "Nothing at GET /mcp/tiny",
    });
  });
});

Deno.test("routes: /health reports ok with each server's phase", async () => {
  await withHosts([{ id: "tiny" }], async ({ app, hosts }) => {
    const response = await send(app(), "/health");
    assert.equal(response.status, 200);
    const body = await response.json();
    assert.equal(body.status, "ok");
    assert.equal(body.version, VERSION);
    assert.equal(body.uptime_s, 5);
    assert.deepEqual(Object.keys(body.servers), ["tiny"]);
    assert.deepEqual(body.servers.tiny, {
      name: "tiny",
      type: "tool server",
      phase: "running",
      since: hosts[0].phase.state.since,
      namespace: "svc-tiny",
      version: "0.0.1",
      in_flight: 0,
      calls: 0,
      errors: 0,
      sessions: 0,
      sessions_evicted: 0,
      sessions_timed_out: 0,
    });

    await hosts[0].stop(1_000);
    const stopping = await send(app(), "/health");
    assert.equal(stopping.status, 503);
    const stoppingBody = await stopping.json();
    assert.equal(stoppingBody.status, "shutting_down");
    assert.equal(stoppingBody.servers.tiny.phase, "shutdown");
  });
});

Deno.test("routes: /health is degraded (200) with one server in error, error (503) with all", async () => {
  await withHosts(
    [{ id: "tiny" }, { id: "broken", fail: "port 9 is taken" }],
    async ({ app }) => {
      const response = await send(app(), "/health");
      assert.equal(response.status, 200);
      const body = await response.json();
      assert.equal(body.status, "degraded");
      assert.equal(body.servers.tiny.phase, "running");
      assert.equal(body.servers.broken.phase, "error");
      assert.equal(
        body.servers.broken.error,
        "Cannot start broken: port 9 is taken",
      );
    },
  );
  await withHosts(
    [{ id: "one", fail: "no disk" }, { id: "two", fail: "no network" }],
    async ({ app }) => {
      const response = await send(app(), "/health");
      assert.equal(response.status, 503);
      const body = await response.json();
      assert.equal(body.status, "error");
      assert.equal(body.servers.one.error, "Cannot start one: no disk");
      assert.equal(body.servers.two.error, "Cannot start two: no network");

      // A POST to a server that could not start: the endpoint says why.
      const call = await send(app(), "/mcp/one", {
        method: "POST",
        headers: MCP_HEADERS,
        body: pingOfSize(60),
      });
      assert.equal(call.status, 503);
      const rpc = await call.json();
      assert.equal(rpc.error.code, -32000);
      assert.match(rpc.error.message, /phase error: Cannot start one: no disk/);
    },
  );
});

/** An endpoint that fails the way a bug would. */
class ThrowingEndpoint extends McpHttpEndpoint {
  override handle(): Promise<Response> {
    throw new Error("boom: /var/lib/agentd/secret.db is corrupt");
  }
}

Deno.test("routes: an unexpected exception becomes a 500 JSON error without details or stack", async () => {
  await withHosts([{ id: "tiny" }], async ({ app, hosts, endpoints, logs }) => {
    const faulty = new Map(endpoints);
    faulty.set(
      "tiny",
      new ThrowingEndpoint(hosts[0], {
        log: createLogger({ sink: () => {} }),
        idleTimeoutMs: 60_000,
      }),
    );
    const response = await send(app({ endpoints: faulty }), "/mcp/tiny", {
      method: "POST",
      headers: MCP_HEADERS,
      body: pingOfSize(60),
    });
    assert.equal(response.status, 500);
    const body = await response.text();
    assert.deepEqual(JSON.parse(body), {
      error: {
        code: "internal",
        message: "Internal error; see the daemon log",
      },
    });
    assert.ok(!body.includes("boom"), body);
    assert.ok(!body.includes("secret.db"), body);
    assert.ok(!/\bat \S+:\d+/.test(body), body);

    // The operator sees what happened in the log.
    const unhandled = logs.find((line) => line.event === "unhandled");
    assert.equal(unhandled?.level, "error");
    assert.equal(unhandled?.path, "/mcp/tiny");
    assert.deepEqual(unhandled?.error, {
      name: "Error",
      message: "boom: /var/lib/agentd/secret.db is corrupt",
    });
    const request = logs.find((line) =>
      line.event === "request" && line.status === 500
    );
    assert.equal(request?.level, "warn");
    assert.equal(request?.method, "POST");
  });
});
