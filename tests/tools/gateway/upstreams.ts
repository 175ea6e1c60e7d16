// Real upstreams for the gateway tests: the MCP reference servers from npm
// run with Node, and a small SDK server that records the headers it gets.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  CallToolRequestSchema,
  type CallToolResult,
  Client,
  ListToolsRequestSchema,
  Server,
  StreamableHTTPClientTransport,
  WebStandardStreamableHTTPServerTransport,
} from "../../../platform/mcp_sdk.ts";
// @ts-types="../../../node_modules/@modelcontextprotocol/sdk/dist/esm/server/mcp.d.ts"
import {
  McpServer,
  ResourceTemplate,
} from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { AdminPage } from "../../../web/admin.ts";
import type {
  AdminServer,
  AdminTool,
  AdminView,
} from "../../../tools/gateway/admin_view.ts";
import { freePort, lines, ROOT } from "../../helpers.ts";

export const EVERYTHING = join(
  ROOT,
  "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);
export const FILESYSTEM = join(
  ROOT,
  "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
);

export interface NodeServer {
  port: number;
  /** `http://127.0.0.1:<port>/mcp` */
  url: string;
  pid: number;
  /** SIGKILL, as a crash would. */
  kill(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** server-everything in its streamable HTTP mode, on `port` (a free one by default). */
export async function startEverythingHttp(
  port = freePort(),
): Promise<NodeServer> {
  const child = new Deno.Command("node", {
    args: [EVERYTHING, "streamableHttp"],
    env: { PORT: String(port) },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const ready = Promise.withResolvers<void>();
  const drained = (async () => {
    for await (const line of lines(child.stderr)) {
      if (/listening on port/i.test(line)) ready.resolve();
    }
    ready.reject(new Error(`server-everything on ${port} exited early`));
  })();
  await ready.promise;
  let killed = false;
  const kill = async () => {
    if (!killed) {
      killed = true;
      child.kill("SIGKILL");
    }
    await child.status;
    await drained;
  };
  return {
    port,
    url: `http://127.0.0.1:${port}/mcp`,
    pid: child.pid,
    kill,
    [Symbol.asyncDispose]: kill,
  };
}

/**
 * A stateless MCP server whose one tool, `whoami`, answers with the
 * Authorization header it received. With `require`, a request lacking any of
 * those headers (name → exact value) gets a 401, as a protected server does.
 */
export function startRecordingServer(
  options: { require?: Record<string, string> } = {},
): {
  url: string;
  seen: (string | null)[];
  /** Requests refused for missing credentials. */
  refused: number;
  [Symbol.asyncDispose](): Promise<void>;
} {
  const seen: (string | null)[] = [];
  const state = { refused: 0 };
  const http = Deno.serve({ port: 0, onListen() {} }, async (request) => {
    const missing = Object.entries(options.require ?? {}).some((
      [name, value],
    ) => request.headers.get(name) !== value);
    if (missing) {
      state.refused++;
      await request.body?.cancel();
      return Response.json({ error: "unauthorized" }, {
        status: 401,
        headers: { "www-authenticate": 'Bearer realm="recorder"' },
      });
    }
    const authorization = request.headers.get("authorization");
    const server = new Server({ name: "recorder", version: "1.0.0" }, {
      capabilities: { tools: {} },
    });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [{
        name: "whoami",
        description: "The Authorization header of this request",
        inputSchema: { type: "object", properties: {} },
      }],
    }));
    server.setRequestHandler(
      CallToolRequestSchema,
      (): CallToolResult => {
        seen.push(authorization);
        return { content: [{ type: "text", text: authorization ?? "none" }] };
      },
    );
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    return await transport.handleRequest(request);
  });
  return {
    url: `http://127.0.0.1:${http.addr.port}/mcp`,
    seen,
    get refused() {
      return state.refused;
    },
    [Symbol.asyncDispose]: () => http.shutdown(),
  };
}

/** An MCP SDK client of the gateway at `<daemon>/mcp`. */
export async function gatewayClient(
  daemonUrl: string,
  token?: string,
): Promise<Client & AsyncDisposable> {
  const client = new Client({ name: "gateway-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${daemonUrl}/mcp`), {
      requestInit: token
        ? { headers: { Authorization: `Bearer ${token}` } }
        : undefined,
    }),
  );
  return Object.assign(client, {
    [Symbol.asyncDispose]: () => client.close(),
  });
}

/** Calls a tool and returns its result, failing the test on a transport error. */
export async function call(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<CallToolResult> {
  const result = await client.callTool({ name, arguments: args });
  assert.ok("content" in result, `no content in ${JSON.stringify(result)}`);
  return result as CallToolResult;
}

/** The JSON a gateway tool answered (its structuredContent), asserting success. */
export async function callJson(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const result = await call(client, name, args);
  assert.notEqual(result.isError, true, textOf(result));
  assert.ok(result.structuredContent, textOf(result));
  return result.structuredContent;
}

export function textOf(result: CallToolResult): string {
  return result.content.map((block) =>
    block.type === "text" ? block.text : `[${block.type}]`
  ).join("\n");
}

/** The gateway's view, read back from its section of `/admin` as JSON. */
export async function adminView(daemonUrl: string): Promise<AdminView> {
  const response = await fetch(`${daemonUrl}/admin`, {
    headers: { Accept: "application/json" },
  });
  assert.equal(response.status, 200);
  const page: AdminPage = await response.json();
  const section = page.sections.find((found) => found.server === "gateway");
  assert.ok(section, "/admin has the gateway's section");
  const rows = (id: string) =>
    section.tables.find((table) => table.id === id)?.rows ?? [];
  const field = (key: string) =>
    section.fields.find((found) => found.key === key)?.value;
  return {
    generated_at: page.generated_at,
    version: page.version,
    health_interval_ms: Number(field("health_interval_ms")),
    balance: field("balance") === "least_in_flight"
      ? "least_in_flight"
      : "round_robin",
    servers: rows("servers") as unknown as AdminServer[],
    tools: rows("tools") as unknown as AdminTool[],
  };
}

export function stateOf(view: AdminView, name: string): string | undefined {
  return view.servers.find((server) => server.name === name)?.state;
}

/** Writes the daemon config file with a `gateway` section. */
export async function writeConfig(
  dir: string,
  gateway: Record<string, unknown>,
): Promise<string> {
  const path = join(dir, "agentd.json");
  await Deno.writeTextFile(path, JSON.stringify({ gateway }, null, 2));
  return path;
}

/** A local webhook receiver for alerts. */
export function startWebhook(): {
  url: string;
  received: Record<string, unknown>[];
  [Symbol.asyncDispose](): Promise<void>;
} {
  const received: Record<string, unknown>[] = [];
  const http = Deno.serve({ port: 0, onListen() {} }, async (request) => {
    received.push(await request.json());
    return new Response(null, { status: 204 });
  });
  return {
    url: `http://127.0.0.1:${http.addr.port}/alerts`,
    received,
    [Symbol.asyncDispose]: () => http.shutdown(),
  };
}

/** What startChangingServer's tools saw and can do. */
export interface ChangingServer {
  url: string;
  /** The progress token each call of `slow` arrived with (undefined: none). */
  tokens: unknown[];
  /** Adds a tool (`answers <name>`) on every session: each tells its client tools/list_changed. */
  addTool(name: string): void;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * A stateful MCP SDK McpServer at /mcp (one per session, as the SDK serves
 * streamable HTTP) with `first` and `slow` (three progress reports with a
 * message, when the call brings a progress token), and tools added at run
 * time, which the SDK announces with tools/list_changed.
 */
export function startChangingServer(): ChangingServer {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const servers: McpServer[] = [];
  const added: string[] = [];
  const tokens: unknown[] = [];
  const addTo = (server: McpServer, name: string) =>
    server.registerTool(name, {
      description: `Answers ${name}`,
      inputSchema: {},
    }, () => ({ content: [{ type: "text", text: name }] }));
  const http = serveSessions(sessions, async (transport) => {
    const server = new McpServer({ name: "changing", version: "1.0.0" });
    addTo(server, "first");
    for (const name of added) addTo(server, name);
    server.registerTool("slow", {
      description: "Reports progress three times, then answers",
      inputSchema: {},
    }, async (_args, extra) => {
      const token = extra._meta?.progressToken;
      tokens.push(token);
      for (let step = 1; step <= 3 && token !== undefined; step++) {
        await extra.sendNotification({
          method: "notifications/progress",
          params: {
            progressToken: token,
            progress: step,
            total: 3,
            message: `step ${step} of 3`,
          },
        });
      }
      return { content: [{ type: "text", text: "done" }] };
    });
    servers.push(server);
    await server.connect(transport);
  });
  return {
    url: `http://127.0.0.1:${http.addr.port}/mcp`,
    tokens,
    addTool(name) {
      added.push(name);
      for (const server of servers) {
        if (server.isConnected()) addTo(server, name);
      }
    },
    async [Symbol.asyncDispose]() {
      for (const transport of sessions.values()) await transport.close();
      await http.shutdown();
    },
  };
}

/**
 * Serves streamable HTTP at /mcp with a stateful session per client:
 * `connect` gets each new session's transport to connect a server to.
 */
function serveSessions(
  sessions: Map<string, WebStandardStreamableHTTPServerTransport>,
  connect: (
    transport: WebStandardStreamableHTTPServerTransport,
  ) => Promise<void>,
): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      const id = request.headers.get("mcp-session-id");
      if (id !== null) {
        const transport = sessions.get(id);
        return transport
          ? await transport.handleRequest(request)
          : new Response("unknown session", { status: 404 });
      }
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        onsessioninitialized: (sid) => {
          sessions.set(sid, transport);
        },
        onsessionclosed: (sid) => {
          sessions.delete(sid);
        },
      });
      await connect(transport);
      return await transport.handleRequest(request);
    },
  );
}

/** What startListingServer serves and can add. */
export interface ListingServer {
  url: string;
  /** Adds `listing://<name>` (text `resource <name>`) on every session: each tells its client resources/list_changed. */
  addResource(name: string): void;
  /** Adds prompt `<name>` (a user message `prompt <name> for <topic>`): each session tells prompts/list_changed. */
  addPrompt(name: string): void;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * An MCP SDK McpServer at /mcp (one per session) with tool `hello`, resource
 * `listing://first` and prompt `first`, and more of each added at run time,
 * which the SDK announces with resources/ and prompts/list_changed. It also
 * answers every `agentd://listing/results/<id>` (a resource template, not
 * listed), as a remote agentd keeps its big results.
 */
export function startListingServer(): ListingServer {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const servers: McpServer[] = [];
  const resources = ["first"];
  const prompts = ["first"];
  const addResource = (server: McpServer, name: string) =>
    server.registerResource(name, `listing://${name}`, {
      description: `Resource ${name}`,
      mimeType: "text/plain",
    }, (uri) => ({
      contents: [{
        uri: uri.href,
        mimeType: "text/plain",
        text: `resource ${name}`,
      }],
    }));
  const addPrompt = (server: McpServer, name: string) =>
    server.registerPrompt(name, {
      description: `Prompt ${name}`,
      argsSchema: { topic: z.string() },
    }, ({ topic }) => ({
      messages: [{
        role: "user",
        content: { type: "text", text: `prompt ${name} for ${topic}` },
      }],
    }));
  const http = serveSessions(sessions, async (transport) => {
    const server = new McpServer({ name: "listing", version: "1.0.0" });
    // The gateway registers servers by their tools: one to have some.
    server.registerTool("hello", {
      description: "Answers hello",
      inputSchema: {},
    }, () => ({ content: [{ type: "text", text: "hello" }] }));
    for (const name of resources) addResource(server, name);
    for (const name of prompts) addPrompt(server, name);
    server.registerResource(
      "kept",
      new ResourceTemplate("agentd://listing/results/{id}", {
        list: undefined,
      }),
      { mimeType: "text/plain" },
      (uri, { id }) => ({
        contents: [{
          uri: uri.href,
          mimeType: "text/plain",
          text: `kept ${id}`,
        }],
      }),
    );
    servers.push(server);
    await server.connect(transport);
  });
  const live = () => servers.filter((server) => server.isConnected());
  return {
    url: `http://127.0.0.1:${http.addr.port}/mcp`,
    addResource(name) {
      resources.push(name);
      for (const server of live()) addResource(server, name);
    },
    addPrompt(name) {
      prompts.push(name);
      for (const server of live()) addPrompt(server, name);
    },
    async [Symbol.asyncDispose]() {
      for (const transport of sessions.values()) await transport.close();
      await http.shutdown();
    },
  };
}
