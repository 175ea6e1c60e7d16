// Discovery against real things: SDK MCP servers over Deno.serve (JSON and
// SSE answers), plain HTTP servers, closed and silent ports, and two
// "daemons" announcing through one Deno KV file.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  Server,
  WebStandardStreamableHTTPServerTransport,
} from "../../../platform/mcp_sdk.ts";
import { DiscoveryConfig } from "../../../tools/gateway/config.ts";
import {
  type Announcement,
  ANNOUNCEMENTS,
  Announcer,
  GATEWAY_NAMESPACE,
  listAnnouncements,
  openCoordinationStore,
} from "../../../tools/gateway/announcements.ts";
import { discover, targets } from "../../../tools/gateway/discovery.ts";
import { probeMcp } from "../../../tools/gateway/probe.ts";
import { createLogger } from "../../../platform/log.ts";
import { scoped, type Store } from "../../../platform/store/mod.ts";
import { MemoryStore } from "../../../platform/store/memory.ts";
import { openKvStore } from "../../../platform/store/kv.ts";
import { freePort, tempDir, waitFor } from "../../helpers.ts";

interface McpTestServer {
  url: string;
  /** Open sessions by id. */
  sessions: Map<string, WebStandardStreamableHTTPServerTransport>;
  /** Sessions ended by a client's DELETE. */
  closed: string[];
  [Symbol.asyncDispose](): Promise<void>;
}

/** A stateful SDK server at /mcp answering with JSON or with SSE streams. */
function startMcpServer(mode: "json" | "sse"): McpTestServer {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const closed: string[] = [];
  const http = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      if (new URL(request.url).pathname !== "/mcp") {
        return new Response("not found", { status: 404 });
      }
      const id = request.headers.get("mcp-session-id");
      if (id !== null) {
        const transport = sessions.get(id);
        return transport
          ? await transport.handleRequest(request)
          : new Response("unknown session", { status: 404 });
      }
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        enableJsonResponse: mode === "json",
        onsessioninitialized: (sid) => {
          sessions.set(sid, transport);
        },
        onsessionclosed: (sid) => {
          sessions.delete(sid);
          closed.push(sid);
        },
      });
      const server = new Server(
        { name: `test-${mode}`, version: "1.2.3" },
        { capabilities: { tools: {} } },
      );
      await server.connect(transport);
      return await transport.handleRequest(request);
    },
  );
  return {
    url: `http://127.0.0.1:${http.addr.port}/mcp`,
    sessions,
    closed,
    async [Symbol.asyncDispose]() {
      for (const transport of sessions.values()) await transport.close();
      await http.shutdown();
    },
  };
}

/** A plain HTTP server; `hits` counts requests per path. */
function startHttpServer(
  handle: (request: Request) => Response | Promise<Response>,
): { origin: string; hits: Map<string, number> } & AsyncDisposable {
  const hits = new Map<string, number>();
  const http = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (request) => {
      const path = new URL(request.url).pathname;
      hits.set(path, (hits.get(path) ?? 0) + 1);
      return handle(request);
    },
  );
  return {
    origin: `http://127.0.0.1:${http.addr.port}`,
    hits,
    [Symbol.asyncDispose]: () => http.shutdown(),
  };
}

function config(input: Record<string, unknown> = {}): DiscoveryConfig {
  return DiscoveryConfig.parse(input);
}

function logLines(): { log: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  return {
    log: createLogger({ level: "debug", sink: (line) => lines.push(line) }),
    lines,
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

Deno.test("probeMcp: an SDK server answering JSON is reachable and its session is closed", async () => {
  await using server = startMcpServer("json");
  const result = await probeMcp(server.url, 2000);
  assert.equal(result.reachable, true, result.error);
  assert.equal(result.url, server.url);
  assert.equal(result.server_name, "test-json");
  assert.equal(result.server_version, "1.2.3");
  assert.equal(result.protocol_version, "2025-11-25");
  assert.equal(result.error, undefined);
  assert.ok(result.latency_ms >= 0 && result.latency_ms < 2000);
  assert.equal(server.closed.length, 1, "the DELETE ended the session");
  assert.equal(server.sessions.size, 0);
});

Deno.test("probeMcp: an SDK server answering with an SSE stream is reachable and its session is closed", async () => {
  await using server = startMcpServer("sse");
  const result = await probeMcp(server.url, 2000);
  assert.equal(result.reachable, true, result.error);
  assert.equal(result.server_name, "test-sse");
  assert.equal(result.protocol_version, "2025-11-25");
  assert.equal(server.closed.length, 1, "the DELETE ended the session");
  assert.equal(server.sessions.size, 0);
});

Deno.test("probeMcp: takes the SSE message answering its request, across chunks and CRLF lines", async () => {
  const answer = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    result: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      serverInfo: { name: "streamed", version: "9" },
    },
  });
  const chunks = [
    ": comment\r\nevent: message\r\ndata: ",
    JSON.stringify({ jsonrpc: "2.0", method: "notifications/message" }),
    "\r\n\r",
    "\ndata: " + JSON.stringify({ jsonrpc: "2.0", id: 7, result: {} }),
    "\r\n\r\nid: 1\r\ndata: not json\r\n\r\ndata: ",
    answer.slice(0, 20),
    answer.slice(20) + "\r\n\r\n",
  ];
  await using http = startHttpServer(() =>
    new Response(
      new ReadableStream({
        async start(controller) {
          for (const chunk of chunks) {
            controller.enqueue(new TextEncoder().encode(chunk));
            await sleep(5);
          }
          controller.close();
        },
      }),
      { headers: { "content-type": "text/event-stream" } },
    )
  );
  const result = await probeMcp(`${http.origin}/mcp`, 2000);
  assert.deepEqual(
    { ...result, latency_ms: 0 },
    {
      url: `${http.origin}/mcp`,
      reachable: true,
      server_name: "streamed",
      server_version: "9",
      protocol_version: "2025-06-18",
      latency_ms: 0,
    },
  );
});

Deno.test("probeMcp: HTTP errors, web pages, other JSON and redirects are not MCP servers", async () => {
  await using elsewhere = startHttpServer(() => new Response("hi"));
  await using http = startHttpServer((request) => {
    switch (new URL(request.url).pathname) {
      case "/html":
        return new Response("<!doctype html><title>Hi</title>", {
          headers: { "content-type": "text/html; charset=utf-8" },
        });
      case "/status":
        return Response.json({ status: "ok" });
      case "/broken":
        return new Response("{", {
          headers: { "content-type": "application/json" },
        });
      case "/refuse":
        return Response.json({
          jsonrpc: "2.0",
          id: 1,
          error: { code: -32600, message: "Unsupported protocol version" },
        });
      case "/moved":
        return Response.redirect(`${elsewhere.origin}/mcp`, 302);
      default:
        return new Response("nothing here", { status: 404 });
    }
  });
  const probe = async (path: string) => {
    const result = await probeMcp(`${http.origin}${path}`, 2000);
    assert.equal(result.reachable, false);
    assert.equal(result.server_name, undefined);
    return result.error;
  };
  assert.equal(await probe("/mcp"), "HTTP 404");
  assert.equal(
    await probe("/html"),
    "not an MCP server: answered text/html",
  );
  assert.equal(
    await probe("/status"),
    "not an MCP server: no JSON-RPC answer to initialize",
  );
  assert.equal(
    await probe("/broken"),
    "not an MCP server: answered invalid JSON",
  );
  assert.equal(
    await probe("/refuse"),
    "initialize failed: Unsupported protocol version",
  );
  assert.equal(
    await probe("/moved"),
    `HTTP 302 (redirect to ${elsewhere.origin}/mcp not followed)`,
  );
  assert.equal(elsewhere.hits.size, 0, "a redirect is never followed");
});

Deno.test("probeMcp: a closed port is unreachable: connection refused", async () => {
  const url = `http://127.0.0.1:${freePort()}/mcp`;
  const result = await probeMcp(url, 2000);
  assert.deepEqual({ ...result, latency_ms: 0 }, {
    url,
    reachable: false,
    latency_ms: 0,
    error: "connection refused",
  });
});

Deno.test("probeMcp: a server that never answers times out within the timeout", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  const accepting = (async () => {
    try {
      for await (const conn of listener) conns.push(conn);
    } catch {
      // listener closed
    }
  })();
  try {
    const started = performance.now();
    const result = await probeMcp(
      `http://127.0.0.1:${listener.addr.port}/mcp`,
      300,
    );
    const took = performance.now() - started;
    assert.equal(result.reachable, false);
    assert.equal(result.error, "timed out after 300 ms");
    assert.ok(took >= 290 && took < 1300, `took ${took} ms`);
  } finally {
    listener.close();
    await accepting;
    for (const conn of conns) conn.close();
  }
});

Deno.test("probeMcp: the timeout also bounds a body that never ends", async () => {
  let stall: ReadableStreamDefaultController<Uint8Array> | undefined;
  await using http = startHttpServer(() =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          stall = controller;
          controller.enqueue(new TextEncoder().encode('{"jsonrpc":'));
        },
      }),
      { headers: { "content-type": "application/json" } },
    )
  );
  const started = performance.now();
  const result = await probeMcp(`${http.origin}/mcp`, 300);
  const took = performance.now() - started;
  assert.equal(result.error, "timed out after 300 ms");
  assert.ok(took < 1300, `took ${took} ms`);
  try {
    stall?.close();
  } catch {
    // already cancelled by the client going away
  }
});

Deno.test("targets: every network choice, entry forms and de-duplication", () => {
  const cfg = config({
    ports: [3001, 3002],
    hosts: ["10.0.0.5:8080", "https://mcp.example.com/v1/mcp", "[::1]:9000"],
    networks: {
      lab: ["lab-1.internal:3000", "http://127.0.0.1:3001/mcp"],
      edge: ["http://edge.example:80/mcp"],
    },
  });
  const announcement: Announcement = {
    instance: "b",
    name: "agentd",
    url: "http://127.0.0.1:3002/mcp",
    version: "0.1.0",
    servers: ["memory"],
    announced_at: "2026-01-01T00:00:00.000Z",
    expires_at: "2026-01-01T00:01:30.000Z",
  };
  const all = targets(cfg, undefined, [announcement]);
  assert.deepEqual(all.map(({ url, source }) => [source, url]), [
    ["announcement", "http://127.0.0.1:3002/mcp"],
    ["loopback", "http://127.0.0.1:3001/mcp"],
    ["hosts", "http://10.0.0.5:8080/mcp"],
    ["hosts", "https://mcp.example.com/v1/mcp"],
    ["hosts", "http://[::1]:9000/mcp"],
    ["edge", "http://edge.example:80/mcp"],
    ["lab", "http://lab-1.internal:3000/mcp"],
  ]);
  assert.equal(all[0].announcement, announcement);
  assert.deepEqual(
    targets(cfg, "store", [announcement]).map((t) => t.url),
    ["http://127.0.0.1:3002/mcp"],
  );
  assert.deepEqual(targets(cfg, "loopback", [announcement]).map((t) => t.url), [
    "http://127.0.0.1:3001/mcp",
    "http://127.0.0.1:3002/mcp",
  ]);
  assert.deepEqual(targets(cfg, "hosts", [announcement]).map((t) => t.url), [
    "http://10.0.0.5:8080/mcp",
    "https://mcp.example.com/v1/mcp",
    "http://[::1]:9000/mcp",
  ]);
  assert.deepEqual(targets(cfg, "lab", [announcement]), [
    { url: "http://lab-1.internal:3000/mcp", source: "lab" },
    { url: "http://127.0.0.1:3001/mcp", source: "lab" },
  ]);
  assert.deepEqual(targets(config(), undefined, []), []);
  assert.throws(
    () => targets(cfg, "office", []),
    {
      message:
        'Unknown network "office": choose one of store, loopback, hosts, edge, lab, or omit it to search all of them',
    },
  );
});

Deno.test("targets: bad entries are named; only the chosen lists are read", () => {
  for (
    const [entry, where] of [
      ["no-port", "hosts"],
      ["host:0", "hosts"],
      ["host:70000", "hosts"],
      ["host:80/mcp", "hosts"],
      ["ftp://files.example/mcp", "hosts"],
      ["::1:8080", "hosts"],
      ["http://", "hosts"],
    ]
  ) {
    assert.throws(
      () => targets(config({ hosts: [entry] }), "hosts", []),
      {
        message:
          `Invalid discovery entry "${entry}" in ${where}: expected host:port (e.g. 127.0.0.1:3001 or [::1]:3001) or an http(s) URL`,
      },
    );
  }
  const cfg = config({ ports: [3001], networks: { lab: ["bad entry"] } });
  assert.throws(
    () => targets(cfg, undefined, []),
    /"bad entry" in networks\.lab/,
  );
  assert.equal(targets(cfg, "loopback", []).length, 1);
});

Deno.test("Announcer and listAnnouncements: two daemons on one KV file see each other, not themselves", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "agentd.kv");
  const { log, lines } = logLines();
  // Daemon A uses the KV file as its default store (scoped like boot does);
  // daemon B names the same file as its coordination store.
  const rootA = await openKvStore(path);
  const storeA = scoped(rootA, [GATEWAY_NAMESPACE]);
  const fallbackB = new MemoryStore();
  const coordinationB = await openCoordinationStore(path, fallbackB, {});
  let clock = Date.parse("2026-03-01T12:00:00.000Z");
  const announcerA = new Announcer({
    store: storeA,
    instance: "a",
    interval_ms: 60_000,
    log,
    info: () => ({
      name: "agentd",
      url: "http://127.0.0.1:8001/mcp",
      version: "0.1.0",
      servers: ["memory", "mcp-gateway"],
    }),
    clock: () => clock,
  });
  const announcerB = new Announcer({
    store: coordinationB.store,
    instance: "b",
    interval_ms: 60_000,
    log,
    info: () => ({
      name: "agentd",
      url: "http://127.0.0.1:8000/mcp",
      version: "0.1.0",
      servers: [],
    }),
    clock: () => clock,
  });
  try {
    announcerA.start();
    announcerB.start();
    const seenByA = await waitFor(
      () => listAnnouncements(storeA, { exclude: "a", now: clock }),
      (list) => list.length === 1,
      2000,
    ).catch((e) => {
      console.error("DEBUG", lines);
      throw e;
    });
    assert.deepEqual(seenByA, [{
      instance: "b",
      name: "agentd",
      url: "http://127.0.0.1:8000/mcp",
      version: "0.1.0",
      servers: [],
      announced_at: "2026-03-01T12:00:00.000Z",
      expires_at: "2026-03-01T12:03:00.000Z",
    }]);
    const seenByB = await waitFor(
      () =>
        listAnnouncements(coordinationB.store, { exclude: "b", now: clock }),
      (list) => list.length === 1,
    );
    assert.equal(seenByB[0].instance, "a");
    assert.deepEqual(seenByB[0].servers, ["memory", "mcp-gateway"]);
    assert.deepEqual(
      (await listAnnouncements(storeA, { now: clock })).map((a) => a.url),
      ["http://127.0.0.1:8000/mcp", "http://127.0.0.1:8001/mcp"],
      "sorted by url",
    );
    assert.equal(
      (await fallbackB.list([])).entries.length,
      0,
      "B's own store is not the coordination store",
    );

    // A stops renewing (its clock stands still); later than 3 intervals it is stale.
    await announcerA.stop();
    assert.deepEqual(
      (await listAnnouncements(storeA, { now: clock })).map((a) => a.instance),
      ["b"],
      "stop() removed A's record",
    );
    await storeA.set([ANNOUNCEMENTS, "a"], {
      instance: "a",
      name: "agentd",
      url: "http://127.0.0.1:8001/mcp",
      version: "0.1.0",
      servers: [],
      announced_at: new Date(clock).toISOString(),
      expires_at: new Date(clock + 180_000).toISOString(),
    });
    clock += 180_001;
    assert.deepEqual(
      await listAnnouncements(coordinationB.store, {
        exclude: "b",
        now: clock,
      }),
      [],
      "A's record expired",
    );
    assert.equal(
      await storeA.get([ANNOUNCEMENTS, "a"]),
      null,
      "and was deleted",
    );
    // Two writers on one SQLite file may meet "database is locked"; the
    // Announcer retries within a second instead of waiting an interval.
    const events = lines.map((line) => JSON.parse(line));
    for (const event of events.filter((e) => e.level === "warn")) {
      assert.equal(event.event, "announcement_failed");
      assert.equal(event.error, "database is locked");
      assert.ok(event.retry_in_ms < 1000);
    }
  } finally {
    await announcerA.stop();
    await announcerB.stop();
    await coordinationB.close();
    await fallbackB.close();
    await rootA.close();
  }
  const reopened = await openKvStore(path);
  try {
    assert.deepEqual(
      (await reopened.list([])).entries.map((e) => e.key),
      [],
      "both records are gone after stop()",
    );
  } finally {
    await reopened.close();
  }
});

Deno.test("Announcer: renews every interval, waits until there is something to announce, logs failures and retries", async () => {
  const store = new MemoryStore();
  const { log, lines } = logLines();
  let clock = 1_000_000;
  let calls = 0;
  const announcer = new Announcer({
    store,
    instance: "me",
    interval_ms: 20,
    log,
    info: () => {
      calls++;
      if (calls === 1) return undefined; // not listening yet
      if (calls === 2) throw new Error("address not known yet");
      return {
        name: "agentd",
        url: "http://127.0.0.1:9/mcp",
        version: "1",
        servers: ["memory"],
      };
    },
    clock: () => clock,
  });
  try {
    announcer.start();
    announcer.start(); // idempotent
    const first = await waitFor(
      () => store.get([ANNOUNCEMENTS, "me"]),
      (entry) => entry !== null,
    );
    assert.ok(calls >= 3);
    assert.ok(first !== null);
    clock += 5000;
    const renewed = await waitFor(
      () => listAnnouncements(store, { now: clock }),
      (list) => list[0]?.announced_at === new Date(clock).toISOString(),
    );
    assert.equal(renewed[0].expires_at, new Date(clock + 60).toISOString());
    const warnings = lines.map((line) => JSON.parse(line)).filter((line) =>
      line.level === "warn"
    );
    assert.equal(warnings.length, 1);
    assert.equal(warnings[0].event, "announcement_failed");
    assert.equal(warnings[0].error, "address not known yet");
    assert.ok(lines.some((line) => line.includes("announcement_recovered")));
  } finally {
    await announcer.stop();
  }
  assert.equal(await store.get([ANNOUNCEMENTS, "me"]), null);
  const count = calls;
  await sleep(60);
  assert.equal(calls, count, "no tick after stop()");
  await store.close();
});

Deno.test("listAnnouncements: ignores malformed records and deletes only stale ones", async () => {
  const store = new MemoryStore();
  const now = Date.parse("2026-05-05T00:00:00.000Z");
  const record = (instance: string, url: string, expires: number) => ({
    instance,
    name: "agentd",
    url,
    version: "0.1.0",
    servers: ["memory"],
    announced_at: new Date(expires - 90_000).toISOString(),
    expires_at: new Date(expires).toISOString(),
  });
  try {
    await store.set(
      [ANNOUNCEMENTS, "z"],
      record("z", "http://a:1/mcp", now + 1),
    );
    await store.set(
      [ANNOUNCEMENTS, "y"],
      record("y", "http://b:1/mcp", now + 1),
    );
    await store.set(
      [ANNOUNCEMENTS, "old"],
      record("old", "http://c:1/mcp", now),
    );
    await store.set([ANNOUNCEMENTS, "text"], "hello");
    await store.set(
      [ANNOUNCEMENTS, "bad-url"],
      record("bad-url", "ftp://x/", now + 1),
    );
    await store.set(
      [ANNOUNCEMENTS, "other-key"],
      record("someone", "http://d:1/mcp", now + 1),
    );
    await store.set([ANNOUNCEMENTS, "bad-servers"], {
      ...record("bad-servers", "http://e:1/mcp", now + 1),
      servers: [1],
    });
    await store.set([ANNOUNCEMENTS, "bad-time"], {
      ...record("bad-time", "http://f:1/mcp", now + 1),
      expires_at: "soon",
    });
    const list = await listAnnouncements(store, { now });
    assert.deepEqual(list.map((a) => [a.instance, a.url]), [
      ["z", "http://a:1/mcp"],
      ["y", "http://b:1/mcp"],
    ]);
    assert.deepEqual(
      (await store.list([ANNOUNCEMENTS])).entries.map((e) => e.key[1]).sort(),
      ["bad-servers", "bad-time", "bad-url", "other-key", "text", "y", "z"],
      "the stale record is deleted, malformed ones are left alone",
    );
    assert.deepEqual(
      (await listAnnouncements(store, { now, exclude: "z" })).map((a) =>
        a.instance
      ),
      ["y"],
    );
  } finally {
    await store.close();
  }
});

Deno.test("discover: announcements and loopback ports probed together, live and dead", async () => {
  await using announced = startMcpServer("sse");
  await using local = startMcpServer("json");
  const store = new MemoryStore();
  const { log } = logLines();
  const localPort = Number(new URL(local.url).port);
  const deadPort = freePort();
  const announce = (instance: string, url: string) =>
    new Announcer({
      store,
      instance,
      interval_ms: 60_000,
      log,
      info: () => ({ name: "agentd", url, version: "0.1.0", servers: [] }),
    });
  const peers = [
    announce("peer", announced.url),
    announce("dead", `http://127.0.0.1:${deadPort}/mcp`),
    announce("self", "http://127.0.0.1:1/mcp"),
    // Announces a configured port too: probed once, as the announcement.
    announce("twin", local.url),
  ];
  try {
    for (const peer of peers) peer.start();
    await waitFor(
      () => listAnnouncements(store, {}),
      (list) => list.length === peers.length,
    );
    const cfg = config({ ports: [localPort], probe_timeout_ms: 2000 });
    const all = await discover({ config: cfg, store, instance: "self" });
    assert.equal(all.network, "all");
    const byUrl = new Map(all.servers.map((s) => [s.url, s]));
    assert.deepEqual(
      all.servers.map((s) => s.url),
      [...byUrl.keys()].sort(),
      "sorted by url",
    );
    assert.equal(all.servers.length, 3, JSON.stringify(all.servers));
    assert.equal(byUrl.get("http://127.0.0.1:1/mcp"), undefined, "not itself");
    const peer = byUrl.get(announced.url);
    assert.equal(peer?.reachable, true);
    assert.equal(peer?.server_name, "test-sse");
    assert.equal(peer?.source, "announcement");
    assert.equal(peer?.announced_by, "peer");
    const dead = byUrl.get(`http://127.0.0.1:${deadPort}/mcp`);
    assert.equal(dead?.reachable, false);
    assert.equal(dead?.error, "connection refused");
    assert.equal(dead?.announced_by, "dead");
    const twin = byUrl.get(local.url);
    assert.equal(twin?.reachable, true);
    assert.equal(twin?.source, "announcement");

    const loopback = await discover({
      config: cfg,
      store,
      instance: "self",
      network: "loopback",
    });
    assert.deepEqual(
      loopback.servers.map((s) => [s.source, s.url, s.reachable]),
      [
        ["loopback", local.url, true],
      ],
    );
    assert.equal(loopback.servers[0].announced_by, undefined);
    const fromStore = await discover({
      config: cfg,
      store,
      instance: "self",
      network: "store",
    });
    assert.equal(fromStore.network, "store");
    assert.equal(fromStore.servers.length, 3);
    assert.equal(
      announced.sessions.size + local.sessions.size,
      0,
      "no session left behind",
    );
    await assert.rejects(
      discover({ config: cfg, store, instance: "self", network: "lan" }),
      /Unknown network "lan": choose one of store, loopback, hosts,/,
    );
  } finally {
    for (const peer of peers) await peer.stop();
    await store.close();
  }
});

Deno.test("openCoordinationStore: default store, KV file, KV Connect errors", async () => {
  const fallback: Store = new MemoryStore();
  const own = await openCoordinationStore(undefined, fallback, {});
  assert.equal(own.store, fallback);
  await own.close();
  await fallback.set(["still", "open"], 1);

  await using dir = await tempDir();
  const path = join(dir.path, "nested", "coordination.kv");
  const file = await openCoordinationStore(path, fallback, {});
  await file.store.set([ANNOUNCEMENTS, "x"], "value");
  await file.close();
  const raw = await openKvStore(path);
  try {
    assert.deepEqual(
      (await raw.list([])).entries.map((e) => e.key),
      [[GATEWAY_NAMESPACE, ANNOUNCEMENTS, "x"]],
    );
  } finally {
    await raw.close();
  }

  const port = freePort();
  await assert.rejects(
    openCoordinationStore(`https://127.0.0.1:${port}/db?x=1`, fallback, {}),
    {
      message:
        `Cannot open the coordination store at https://127.0.0.1:${port}/db: set DENO_KV_ACCESS_TOKEN to its access token`,
    },
  );
  // PostgreSQL goes through the daemon's store opener (nothing listens here).
  await assert.rejects(
    openCoordinationStore(`postgres://u@127.0.0.1:${port}/x`, fallback, {}),
    /PostgreSQL store at postgres:\/\/u@127\.0\.0\.1:\d+\/x is unreachable/,
  );
  await assert.rejects(
    openCoordinationStore("ftp://db/x", fallback, {}),
    /use a Deno KV file path or an https:\/\/ KV Connect URL/,
  );
  const before = Deno.env.get("DENO_KV_ACCESS_TOKEN");
  try {
    await assert.rejects(
      openCoordinationStore(`https://127.0.0.1:${port}/`, fallback, {
        DENO_KV_ACCESS_TOKEN: "test-token-123456",
      }),
      {
        message:
          `Cannot open the coordination store at https://127.0.0.1:${port}/: connection refused`,
      },
    );
  } finally {
    if (before === undefined) Deno.env.delete("DENO_KV_ACCESS_TOKEN");
    else Deno.env.set("DENO_KV_ACCESS_TOKEN", before);
  }
  await fallback.close();
});
