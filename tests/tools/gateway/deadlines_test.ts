// register_server never waits without end: an upstream that accepts the
// connection and never answers, one that answers initialize but not
// tools/list, and a PostgreSQL store that stops answering each end the call
// with an error naming the step, the URL or store, and the deadline's
// setting; a routed call whose upstream reports progress forever ends at
// call_max_ms (issue 34, item 8). The texts are asserted, not the timings.

import assert from "node:assert/strict";
import { join } from "node:path";
import { z } from "zod";
import {
  type Daemon,
  spawnDaemon,
  spawnServe,
  tempDir,
} from "../../helpers.ts";
import { pgTestIgnore, startPgServer } from "../../pg_server.ts";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  Server,
  WebStandardStreamableHTTPServerTransport,
} from "../../../platform/mcp_sdk.ts";
import {
  call,
  callJson,
  gatewayClient,
  startRecordingServer,
  textOf,
  writeConfig,
} from "./upstreams.ts";

const DEADLINES = { connect_timeout_ms: 1500, health_timeout_ms: 1000 };

/** Accepts TCP connections and never writes a byte. */
function silentServer(): { url: string } & Disposable {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const connections: Deno.Conn[] = [];
  (async () => {
    for await (const connection of listener) connections.push(connection);
  })().catch(() => {}); // the listener closed
  return {
    url: `http://127.0.0.1:${listener.addr.port}/mcp`,
    [Symbol.dispose]() {
      listener.close();
      for (const connection of connections) connection.close();
    },
  };
}

const Rpc = z.object({ method: z.string(), id: z.number().optional() });

/** An MCP server that answers initialize, then never answers tools/list. */
function mute(): { url: string } & AsyncDisposable {
  const hanging = new Set<() => void>();
  const http = Deno.serve({ port: 0, onListen() {} }, async (request) => {
    if (request.method !== "POST") return new Response(null, { status: 405 });
    const message = Rpc.parse(await request.json());
    if (message.method === "initialize") {
      return Response.json({
        jsonrpc: "2.0",
        id: message.id,
        result: {
          protocolVersion: "2025-06-18",
          capabilities: { tools: {} },
          serverInfo: { name: "mute", version: "1.0.0" },
        },
      });
    }
    if (message.id === undefined) return new Response(null, { status: 202 });
    // Held until the gateway gives up (its request is aborted) or we close.
    return await new Promise<Response>((resolve) => {
      const end = () => resolve(new Response(null, { status: 503 }));
      hanging.add(end);
      request.signal.addEventListener("abort", end);
    });
  });
  return {
    url: `http://127.0.0.1:${http.addr.port}/mcp`,
    async [Symbol.asyncDispose]() {
      for (const end of hanging) end();
      await http.shutdown();
    },
  };
}

async function gatewayAlone(dir: string): Promise<Daemon> {
  const config = await writeConfig(dir, DEADLINES);
  return await spawnDaemon([
    "mcp",
    "gateway",
    "--port",
    "0",
    "--config",
    config,
    "--data-dir",
    join(dir, "data"),
  ]);
}

Deno.test("deadlines: register_server names the step, the URL and the setting when an upstream does not answer", async () => {
  await using dir = await tempDir();
  using silent = silentServer();
  await using quiet = mute();
  const daemon = await gatewayAlone(dir.path);
  try {
    await using client = await gatewayClient(daemon.url);

    const unanswered = await call(client, "register_server", {
      name: "silent",
      url: silent.url,
    });
    assert.equal(unanswered.isError, true, textOf(unanswered));
    assert.equal(
      textOf(unanswered),
      `Cannot reach an MCP server at ${silent.url}: no answer to initialize ` +
        "within 1.5 s (connect_timeout_ms). Nothing was registered.",
    );

    const unlisted = await call(client, "register_server", {
      name: "quiet",
      url: quiet.url,
    });
    assert.equal(unlisted.isError, true, textOf(unlisted));
    assert.equal(
      textOf(unlisted),
      `Cannot reach an MCP server at ${quiet.url}: no answer to tools/list ` +
        "within 1 s (health_timeout_ms). Nothing was registered.",
    );

    const listed = await callJson(client, "list_servers");
    assert.equal(listed.count, 0, JSON.stringify(listed));
  } finally {
    await daemon.stop();
  }
});

/** The PostgreSQL server's processes: its postmaster and every backend. */
async function pgProcesses(port: number): Promise<number[]> {
  const pids = async (args: string[]) => {
    const { stdout } = await new Deno.Command("pgrep", { args }).output();
    return new TextDecoder().decode(stdout).split("\n").filter(Boolean)
      .map(Number);
  };
  const [postmaster] = await pids(["-f", `postgres -D .* -p ${port} `]);
  assert.ok(postmaster, `no postmaster on port ${port}`);
  return [postmaster, ...await pids(["-P", String(postmaster)])];
}

Deno.test({
  name:
    "deadlines: register_server on a PostgreSQL store that stops answering names the store and store_timeout_ms",
  ignore: pgTestIgnore(),
  async fn() {
    const pg = await startPgServer();
    await using dir = await tempDir();
    await using recorder = startRecordingServer();
    let paused: number[] = [];
    try {
      const db = new URL(await pg.createDatabase("deadlines"));
      db.password = pg.password;
      const config = await writeConfig(dir.path, { store_timeout_ms: 1000 });
      const daemon = await spawnServe(join(dir.path, "data"), {
        env: { AGENTD_SERVERS: "gateway", AGENTD_STORE: db.href },
        extra: ["--config", config],
      });
      try {
        await using client = await gatewayClient(daemon.url);
        // Hung, not down: connections are accepted and nothing answers.
        paused = await pgProcesses(pg.port);
        for (const pid of paused) Deno.kill(pid, "SIGSTOP");
        const result = await call(client, "register_server", {
          name: "rec",
          url: recorder.url,
        });
        assert.equal(result.isError, true, textOf(result));
        assert.match(
          textOf(result),
          new RegExp(
            "^Cannot save the registration: no answer to a commit on the " +
              "daemon's postgres store within 1 s \\(store_timeout_ms\\)\\. " +
              "It may still be saved when the store answers",
          ),
        );
        assert.ok(!textOf(result).includes(pg.password));
      } finally {
        for (const pid of paused) Deno.kill(pid, "SIGCONT");
        paused = [];
        await daemon.stop("SIGKILL");
      }
    } finally {
      for (const pid of paused) Deno.kill(pid, "SIGCONT");
      await pg.destroy();
    }
  },
});

/** An MCP server whose tool `forever` reports progress every 100 ms and never answers. */
function ticker(): { url: string } & AsyncDisposable {
  let closed = false;
  const http = Deno.serve({ port: 0, onListen() {} }, async (request) => {
    const server = new Server({ name: "ticker", version: "1.0.0" }, {
      capabilities: { tools: {} },
    });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [{ name: "forever", inputSchema: { type: "object" } }],
    }));
    server.setRequestHandler(CallToolRequestSchema, async (call, extra) => {
      const token = call.params._meta?.progressToken;
      // Bounded here so that the test leaves nothing running: 10 s at most.
      for (let step = 1; step <= 100 && !closed; step++) {
        if (token !== undefined) {
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken: token, progress: step },
          });
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return { content: [{ type: "text", text: "done at last" }] };
    });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
    });
    await server.connect(transport);
    return await transport.handleRequest(request);
  });
  return {
    url: `http://127.0.0.1:${http.addr.port}/mcp`,
    async [Symbol.asyncDispose]() {
      closed = true;
      await http.shutdown();
    },
  };
}

Deno.test("deadlines: a routed call whose upstream reports progress forever ends at call_max_ms, and says so", async () => {
  await using dir = await tempDir();
  await using upstream = ticker();
  const config = await writeConfig(dir.path, {
    call_timeout_ms: 500,
    call_max_ms: 1500,
    upstreams: { ticker: { url: upstream.url } },
  });
  const daemon = await spawnDaemon([
    "mcp",
    "gateway",
    "--port",
    "0",
    "--config",
    config,
    "--data-dir",
    join(dir.path, "data"),
  ]);
  try {
    await using client = await gatewayClient(daemon.url);
    const result = await call(client, "ticker__forever");
    assert.equal(result.isError, true, textOf(result));
    assert.equal(
      textOf(result),
      'forever on upstream "ticker" failed: MCP error -32001: still running ' +
        "after 1.5 s (call_max_ms), so it was cancelled",
    );
  } finally {
    await daemon.stop();
  }
});
