// The gateway's eight tools (svc-mcp-gateway), thin over Gateway.

import { z } from "zod";
import type { Caller } from "../../platform/identity.ts";
import type { JsonValue } from "../../platform/store/mod.ts";
import { json, type ToolDef, toolDefiner, ToolError } from "../kit/mod.ts";
import { CredentialHeaders } from "./credentials.ts";
import type { Gateway } from "./gateway.ts";
import { byName, type Upstream } from "./upstream.ts";
import { serverView } from "./views.ts";

const define = toolDefiner<Gateway>();

/**
 * Every gateway tool reads or changes the upstreams: first catch up with
 * registrations other daemons on a shared store made or removed (one
 * version read when nothing changed), as tools/list and routed calls do.
 */
function tool<I extends z.ZodObject>(
  def: ToolDef<Gateway, I>,
): ToolDef<Gateway, I> {
  return define({
    ...def,
    async handle(gateway, args, call) {
      await gateway.refresh();
      return await def.handle(gateway, args, call);
    },
  });
}

const Args = z.record(z.string(), z.unknown())
  .describe("Arguments of the upstream tool, as its inputSchema describes");

const StateOut = z.enum(["connecting", "healthy", "unhealthy", "stopped"]);

/** summary()'s shape: an upstream as list_servers and register_server show it. */
const SummaryOut = z.object({
  name: z.string(),
  group: z.string(),
  source: z.enum(["builtin", "config", "registered", "discovered"]),
  transport: z.enum(["in-process", "http", "stdio"]),
  url: z.string().nullable(),
  state: StateOut,
  since: z.string(),
  credentials: z.boolean(),
  tools: z.array(z.string()),
});

function summary(gateway: Gateway, upstream: Upstream, viewer: Caller) {
  const view = serverView(upstream, viewer);
  return {
    name: view.name,
    group: view.group,
    source: view.source,
    transport: view.transport,
    url: view.target,
    state: view.state,
    since: view.since,
    credentials: view.credentials,
    tools: gateway.toolsOf(upstream).map((tool) => tool.name),
  };
}

export const listServers = tool({
  name: "list_servers",
  touches: [],
  title: "List servers",
  description:
    "Lists every upstream MCP server behind this gateway: name, replica group, where it comes from " +
    "(builtin, config, registered), transport, URL or command, state and its tools' gateway names.",
  input: z.object({}),
  output: z.object({ servers: z.array(SummaryOut), count: z.number().int() }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  handle(gateway, _args, call) {
    const servers = [...gateway.upstreams.values()]
      .sort(byName)
      .map((upstream) => summary(gateway, upstream, call.caller));
    return Promise.resolve(json({ servers, count: servers.length }));
  },
});

export const registerServer = tool({
  name: "register_server",
  touches: ["upstreams"],
  argKinds: { url: "url" },
  title: "Register a server",
  description:
    "Registers a streamable HTTP MCP server under `name` (the prefix of its tools: <name>__<tool>). " +
    "The server must answer initialize now; `tools` limits which of its tools are exposed. " +
    "`token` (sent as a bearer token) and `headers` are the server's credentials: stored encrypted, " +
    "never listed or logged. Registrations persist across restarts. stdio servers are configured in the config file.",
  input: z.object({
    name: z.string().min(1).max(40)
      .describe("Lower-case letters, digits, '-' or single '_'"),
    url: z.string().min(1).describe("e.g. http://127.0.0.1:3001/mcp"),
    tools: z.array(z.string().min(1)).min(1).optional()
      .describe("Expose only these tools of the server"),
    token: z.string().min(1).max(8192).regex(
      /^[^\s]+$/,
      "a bearer token without spaces or line breaks",
    ).optional()
      .describe("Bearer token the server needs (sent as Authorization)"),
    headers: CredentialHeaders.optional()
      .describe("Headers the server needs, e.g. an API key header"),
  }),
  output: z.object({ registered: SummaryOut }),
  annotations: { readOnlyHint: false, openWorldHint: true },
  async handle(gateway, args, call) {
    const upstream = await gateway.registered.register(
      args.name,
      args.url,
      args.tools,
      {
        token: args.token,
        headers: args.headers,
      },
    );
    return json({ registered: summary(gateway, upstream, call.caller) });
  },
});

export const unregisterServer = tool({
  name: "unregister_server",
  touches: ["upstreams"],
  title: "Unregister a server",
  description:
    "Removes a server added with register_server and its tools. Built-in and config-file servers cannot be removed here.",
  input: z.object({ name: z.string().min(1) }),
  output: z.object({ unregistered: z.string() }),
  annotations: { destructiveHint: true, idempotentHint: false },
  async handle(gateway, args) {
    await gateway.registered.unregister(args.name);
    return json({ unregistered: args.name });
  },
});

export const routeToolCall = tool({
  name: "route_tool_call",
  touches: [],
  title: "Call a tool on one server",
  description:
    "Calls `tool` (the upstream's own tool name) on `server` (an upstream name or a replica group). " +
    "When that upstream is down, a healthy replica of its group takes the call; the result's " +
    "_meta['io.agentd/upstream'] says which one answered.",
  input: z.object({
    server: z.string().min(1),
    tool: z.string().min(1),
    args: Args,
  }),
  annotations: { openWorldHint: true },
  handle(gateway, args, call) {
    return gateway.groups.route(args.server, args.tool, args.args, call);
  },
});

export const broadcastToolCall = tool({
  name: "broadcast_tool_call",
  touches: [],
  title: "Call a tool on every server",
  description:
    "Calls `tool` on every upstream that has it, in parallel, each with its own timeout, and returns " +
    "one result per upstream (ok, error, timeout or down). Partial failures are reported, not fatal.",
  input: z.object({ tool: z.string().min(1), args: Args }),
  // One entry per upstream: its content and structured content as it
  // answered (ok, error), or why it did not (down, refused, timeout).
  output: z.object({
    tool: z.string(),
    succeeded: z.number().int(),
    failed: z.number().int(),
    results: z.array(z.object({
      server: z.string(),
      group: z.string(),
      status: z.enum(["ok", "error", "down", "refused", "timeout"]),
      content: z.array(z.looseObject({ type: z.string() })).optional(),
      structured_content: z.looseObject({}).optional(),
      error: z.string().optional(),
      duration_ms: z.number().int(),
    })),
  }),
  annotations: { openWorldHint: true },
  handle(gateway, args, call) {
    return gateway.broadcast(args.tool, args.args, call);
  },
});

export const getServerHealth = tool({
  name: "get_server_health",
  touches: [],
  title: "Health of one server",
  description:
    "State (connecting, healthy, unhealthy, stopped), since when, last check, latency, last error, " +
    "calls, errors, in-flight calls and restarts of one upstream.",
  input: z.object({ name: z.string().min(1) }),
  output: z.object({
    name: z.string(),
    group: z.string(),
    source: z.enum(["builtin", "config", "registered", "discovered"]),
    transport: z.enum(["in-process", "http", "stdio"]),
    target: z.string().nullable(),
    credentials: z.boolean(),
    state: StateOut,
    since: z.string(),
    last_check: z.string().nullable(),
    latency_ms: z.number().nullable(),
    last_error: z.string().nullable(),
    calls: z.number().int(),
    errors: z.number().int(),
    error_rate: z.number(),
    in_flight: z.number().int(),
    tools: z.number().int(),
    pid: z.number().int().nullable(),
    restarts: z.number().int(),
    reroutes: z.number().int(),
  }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  handle(gateway, args, call) {
    const view = serverView(gateway.get(args.name), call.caller);
    return Promise.resolve(json({ ...view } as { [key: string]: JsonValue }));
  },
});

export const getServerTools = tool({
  name: "get_server_tools",
  touches: [],
  title: "Tools of one server",
  description:
    "The tools one upstream exposes through the gateway: gateway name, upstream name, description and input schema.",
  input: z.object({ name: z.string().min(1) }),
  output: z.object({
    server: z.string(),
    state: StateOut,
    tools: z.array(z.object({
      name: z.string(),
      upstream_name: z.string(),
      description: z.string(),
      input_schema: z.looseObject({ type: z.literal("object") }),
    })),
  }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  handle(gateway, args) {
    const upstream = gateway.get(args.name);
    if (upstream.tools.length === 0 && upstream.state !== "healthy") {
      throw new ToolError(
        `"${upstream.name}" is ${upstream.state}${
          upstream.lastError ? ` (${upstream.lastError})` : ""
        } and its tools are not known yet.`,
      );
    }
    const named = gateway.toolsOf(upstream);
    const tools = upstream.tools.map((tool, index) => ({
      name: named[index]?.name ?? tool.name,
      upstream_name: tool.name,
      description: tool.description ?? "",
      input_schema: tool.inputSchema as { [key: string]: JsonValue },
    }));
    return Promise.resolve(
      json({ server: upstream.name, state: upstream.state, tools }),
    );
  },
});

export const discoverServers = tool({
  name: "discover_servers",
  touches: [],
  title: "Discover servers",
  description:
    "Finds MCP servers without knowing their URLs: agentd daemons announcing themselves in the shared " +
    "coordination store, and MCP endpoints on the loopback ports and host lists of the config " +
    "(probed with initialize; nothing else is ever scanned). `network`: store, loopback, hosts or a " +
    "configured network name; all when omitted. Found servers are listed, not registered.",
  input: z.object({ network: z.string().min(1).optional() }),
  output: z.object({
    network: z.string(),
    servers: z.array(z.object({
      url: z.string(),
      reachable: z.boolean(),
      server_name: z.string().optional(),
      server_version: z.string().optional(),
      protocol_version: z.string().optional(),
      latency_ms: z.number(),
      error: z.string().optional(),
      source: z.string(),
      announced_by: z.string().optional(),
      registered_as: z.string().nullable(),
    })),
    reachable: z.number().int(),
  }),
  annotations: { readOnlyHint: true, openWorldHint: true },
  async handle(gateway, args) {
    return json(await gateway.discovered.discover(args.network));
  },
});
