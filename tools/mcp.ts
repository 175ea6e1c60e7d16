// The one place that turns a server spec into MCP SDK servers. Every
// transport (stdio, streamable HTTP, in-process link) gets its SDK server
// from `createSdkServer`, so validation, logging and errors are the same.

import { AsyncLocalStorage } from "node:async_hooks";
import process from "node:process";
import { z } from "zod";
import {
  CallToolRequestSchema,
  type CallToolResult,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  InMemoryTransport,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  type LoggingLevel,
  LoggingLevelSchema,
  McpError,
  type Prompt,
  ReadResourceRequestSchema,
  type Resource,
  type ResourceTemplate,
  Server,
  type ServerCapabilities,
  SetLevelRequestSchema,
  StdioServerTransport,
  SubscribeRequestSchema,
  type Tool,
  type Transport,
  UnsubscribeRequestSchema,
  UriTemplate,
} from "../platform/mcp_sdk.ts";
import type { JsonValue } from "../platform/store.ts";
import type { HostedServer } from "./host.ts";
import { messageOf } from "../platform/errors.ts";
import {
  type CallContext,
  type Caller,
  errorResult,
  type ToolDef,
  ToolError,
} from "./kit.ts";

const RESOURCE_NOT_FOUND = -32002; // MCP's code for an unknown resource URI

/** The identity a transport attaches to a request (from a bearer token), if any. */
export interface RequestAuth {
  caller: Caller;
  /** The raw `Authorization` header, for opted-in gateway pass-through only. */
  authorization?: string;
}

interface ToolEntry {
  def: ToolDef<unknown>;
  input: z.ZodObject;
  listing: Tool;
}

/** The shape MCP requires of a tool's input schema; zod's output always has it. */
const ObjectSchema = z.looseObject({
  type: z.literal("object"),
  properties: z.record(z.string(), z.looseObject({})).optional(),
  required: z.array(z.string()).optional(),
});

/** Listings are derived from the spec once per host, not once per session. */
const catalogs = new WeakMap<HostedServer, Map<string, ToolEntry>>();

function toolCatalog(host: HostedServer): Map<string, ToolEntry> {
  let catalog = catalogs.get(host);
  if (catalog) return catalog;
  catalog = new Map();
  for (const def of host.spec.tools) {
    const input = def.input.strict();
    const listing: Tool = {
      name: def.name,
      description: def.description,
      inputSchema: ObjectSchema.parse(
        z.toJSONSchema(input, { target: "draft-2020-12", io: "input" }),
      ),
    };
    if (def.title !== undefined) listing.title = def.title;
    if (def.annotations !== undefined) listing.annotations = def.annotations;
    catalog.set(def.name, { def, input, listing });
  }
  catalogs.set(host, catalog);
  return catalog;
}

/** `key: message; other: message`, naming each offending argument. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => {
    const path = issue.path.map(String).join(".");
    return path ? `${path}: ${issue.message}` : issue.message;
  }).join("; ");
}

function capabilitiesOf(host: HostedServer): ServerCapabilities {
  const spec = host.spec;
  const capabilities: ServerCapabilities = {
    tools: { listChanged: true },
    logging: {},
  };
  if (
    (spec.resources?.length ?? 0) + (spec.resourceTemplates?.length ?? 0) > 0
  ) {
    capabilities.resources = { subscribe: true, listChanged: true };
  }
  if ((spec.prompts?.length ?? 0) > 0) {
    capabilities.prompts = { listChanged: true };
  }
  if ((spec.prompts?.length ?? 0) + (spec.resourceTemplates?.length ?? 0) > 0) {
    capabilities.completions = {};
  }
  return capabilities;
}

/** One SDK server: one per HTTP session, per stdio process or per in-process link. */
export function createSdkServer(host: HostedServer): Server {
  const spec = host.spec;
  const server = new Server(
    { name: `agentd-${spec.id}`, title: spec.title, version: spec.version },
    { capabilities: capabilitiesOf(host), instructions: spec.instructions },
  );
  const catalog = toolCatalog(host);
  let minLevel: LoggingLevel | undefined;
  const subscriptions = new Set<string>();

  server.setRequestHandler(SetLevelRequestSchema, (request) => {
    minLevel = request.params.level;
    return {};
  });

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      ...[...catalog.values()].map((entry) => entry.listing),
      ...host.dynamicTools()?.list() ?? [],
    ],
  }));

  server.setRequestHandler(
    CallToolRequestSchema,
    async (request, extra): Promise<CallToolResult> => {
      const name = request.params.name;
      const args = request.params.arguments ?? {};
      const entry = catalog.get(name);
      const dynamic = entry ? undefined : host.dynamicTools();
      if (!entry && !dynamic?.has(name)) {
        const own = [...catalog.keys()];
        const more = dynamic?.list().length ?? 0;
        throw new McpError(
          ErrorCode.InvalidParams,
          `Unknown tool "${name}" on server "${spec.id}". Available: ${
            own.join(", ")
          }${more > 0 ? ` and ${more} more (see tools/list)` : ""}`,
        );
      }
      let run: (call: CallContext) => Promise<CallToolResult>;
      if (entry) {
        const parsed = entry.input.safeParse(args);
        if (!parsed.success) {
          host.countCall(name, false, 0);
          return errorResult(
            `Invalid arguments for ${name}: ${describeIssues(parsed.error)}`,
          );
        }
        run = (call) => entry.def.handle(host.context(), parsed.data, call);
      } else {
        run = (call) => {
          host.context(); // throws the readable "not running" error
          if (!dynamic) throw new ToolError(`${name} is not available`);
          return dynamic.call(name, args, call);
        };
      }
      const started = performance.now();
      const progressToken = request.params._meta?.progressToken;
      const call: CallContext = {
        signal: extra.signal,
        sessionId: extra.sessionId ?? linkedSessionOf(extra.authInfo?.extra),
        caller: callerOf(extra.authInfo?.extra),
        authorization: extra.authInfo?.token || undefined,
        async progress(progress, total, message) {
          if (progressToken === undefined) return;
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken, progress, total, message },
          });
        },
        async log(level, data) {
          if (!levelEnabled(minLevel, level)) return;
          await extra.sendNotification({
            method: "notifications/message",
            params: { level, logger: spec.id, data },
          });
        },
        async sample(params) {
          if (!server.getClientCapabilities()?.sampling) {
            throw new ToolError(
              "The client does not support sampling (no `sampling` capability).",
            );
          }
          return await extra.sendRequest(
            { method: "sampling/createMessage", params },
            CreateMessageResultSchema,
          );
        },
        async elicit(params) {
          if (!server.getClientCapabilities()?.elicitation) {
            throw new ToolError(
              "The client does not support elicitation (no `elicitation` capability).",
            );
          }
          return await extra.sendRequest(
            { method: "elicitation/create", params },
            ElicitResultSchema,
          );
        },
        releaseStream() {
          extra.closeSSEStream?.();
        },
      };
      let result: CallToolResult;
      try {
        result = await host.inFlight.run(() => run(call));
      } catch (error) {
        result = error instanceof ToolError
          ? errorResult(error.message, error.content)
          : errorResult(`${name} failed: ${messageOf(error)}`);
        if (!(error instanceof ToolError)) {
          host.log.error("tool_failed", { tool: name, error });
        }
      }
      const ok = result.isError !== true;
      const elapsed = performance.now() - started;
      host.countCall(name, ok, elapsed);
      host.log.info("tool_call", {
        tool: name,
        ok,
        duration_ms: Math.round(elapsed),
        session: extra.sessionId,
      });
      return result;
    },
  );

  registerResources(server, host, subscriptions);
  registerPrompts(server, host);
  registerCompletion(server, host);

  const listener = {
    resourceUpdated(uri: string) {
      if (!subscriptions.has(uri)) return;
      server.sendResourceUpdated({ uri }).catch((error) =>
        host.log.debug("notify_failed", { uri, error })
      );
    },
    toolsChanged() {
      // Before initialization completes there is no one to tell.
      if (server.getClientCapabilities() === undefined) return;
      server.sendToolListChanged().catch((error) =>
        host.log.debug("notify_failed", { error })
      );
    },
  };
  host.listeners.add(listener);
  const previousOnClose = server.onclose;
  server.onclose = () => {
    host.listeners.delete(listener);
    previousOnClose?.();
  };
  return server;
}

function registerResources(
  server: Server,
  host: HostedServer,
  subscriptions: Set<string>,
): void {
  const resources = host.spec.resources ?? [];
  const templates = (host.spec.resourceTemplates ?? []).map((def) => ({
    def,
    template: new UriTemplate(def.uriTemplate),
  }));
  if (resources.length + templates.length === 0) return;

  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: resources.map((def): Resource => {
      const listing: Resource = { uri: def.uri, name: def.name };
      if (def.title !== undefined) listing.title = def.title;
      if (def.description !== undefined) listing.description = def.description;
      if (def.mimeType !== undefined) listing.mimeType = def.mimeType;
      return listing;
    }),
  }));

  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: templates.map(({ def }): ResourceTemplate => {
      const listing: ResourceTemplate = {
        uriTemplate: def.uriTemplate,
        name: def.name,
      };
      if (def.title !== undefined) listing.title = def.title;
      if (def.description !== undefined) listing.description = def.description;
      if (def.mimeType !== undefined) listing.mimeType = def.mimeType;
      return listing;
    }),
  }));

  function knownUri(uri: string): boolean {
    return resources.some((def) => def.uri === uri) ||
      templates.some(({ template }) => template.match(uri) !== null);
  }

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const uri = request.params.uri;
    const url = parseUri(uri);
    const context = contextOrMcpError(host);
    const direct = resources.find((def) => def.uri === uri);
    if (direct) return { contents: await direct.read(context, url) };
    for (const { def, template } of templates) {
      const variables = template.match(uri);
      if (variables) {
        return { contents: await def.read(context, url, variables) };
      }
    }
    throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`, {
      uri,
    });
  });

  server.setRequestHandler(SubscribeRequestSchema, (request) => {
    if (!knownUri(request.params.uri)) {
      throw new McpError(
        RESOURCE_NOT_FOUND,
        `Resource not found: ${request.params.uri}`,
      );
    }
    subscriptions.add(request.params.uri);
    return {};
  });

  server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    subscriptions.delete(request.params.uri);
    return {};
  });
}

function registerPrompts(server: Server, host: HostedServer): void {
  const prompts = host.spec.prompts ?? [];
  if (prompts.length === 0) return;

  server.setRequestHandler(ListPromptsRequestSchema, () => ({
    prompts: prompts.map((def): Prompt => {
      const listing: Prompt = { name: def.name };
      if (def.title !== undefined) listing.title = def.title;
      if (def.description !== undefined) listing.description = def.description;
      if (def.args) {
        listing.arguments = Object.entries(def.args.shape).map(
          ([name, schema]) => {
            const argument: {
              name: string;
              description?: string;
              required: boolean;
            } = {
              name,
              required: !schema.safeParse(undefined).success,
            };
            if (schema.description !== undefined) {
              argument.description = schema.description;
            }
            return argument;
          },
        );
      }
      return listing;
    }),
  }));

  server.setRequestHandler(GetPromptRequestSchema, async (request) => {
    const def = prompts.find((prompt) => prompt.name === request.params.name);
    if (!def) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown prompt "${request.params.name}"`,
      );
    }
    const context = contextOrMcpError(host);
    const args = def.args ?? z.object({});
    const parsed = args.strict().safeParse(request.params.arguments ?? {});
    if (!parsed.success) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Invalid arguments for prompt ${def.name}: ${
          describeIssues(parsed.error)
        }`,
      );
    }
    return await def.get(context, parsed.data);
  });
}

/** Completion of prompt arguments and resource template variables. */
function registerCompletion(server: Server, host: HostedServer): void {
  const prompts = host.spec.prompts ?? [];
  const templates = host.spec.resourceTemplates ?? [];
  if (prompts.length + templates.length === 0) return;
  server.setRequestHandler(CompleteRequestSchema, async (request) => {
    const context = contextOrMcpError(host);
    const { ref, argument } = request.params;
    let values: string[] = [];
    if (ref.type === "ref/resource") {
      const def = templates.find((template) =>
        template.uriTemplate === ref.uri
      );
      if (def?.complete) {
        values = await def.complete(context, argument.name, argument.value);
      }
    } else {
      const def = prompts.find((prompt) => prompt.name === ref.name);
      if (def?.complete) {
        values = await def.complete(context, argument.name, argument.value);
      }
    }
    return completion(values);
  });
}

function completion(values: string[]) {
  const MAX = 100; // the spec caps a completion response at 100 values
  return {
    completion: {
      values: values.slice(0, MAX),
      total: values.length,
      hasMore: values.length > MAX,
    },
  };
}

function contextOrMcpError(host: HostedServer): unknown {
  try {
    return host.context();
  } catch (error) {
    throw new McpError(ErrorCode.InternalError, messageOf(error));
  }
}

function parseUri(uri: string): URL {
  try {
    return new URL(uri);
  } catch {
    throw new McpError(ErrorCode.InvalidParams, `Invalid resource URI: ${uri}`);
  }
}

const LEVELS = LoggingLevelSchema.options;

function levelEnabled(
  min: LoggingLevel | undefined,
  level: LoggingLevel,
): boolean {
  return min === undefined || LEVELS.indexOf(level) >= LEVELS.indexOf(min);
}

/** The outer session an in-process link forwarded for (set only by trusted code, never by a client). */
function linkedSessionOf(
  extra: Record<string, unknown> | undefined,
): string | undefined {
  return typeof extra?.session === "string" ? extra.session : undefined;
}

function callerOf(extra: Record<string, unknown> | undefined): Caller {
  const agent = extra?.agent;
  return typeof agent === "string" ? { agent } : {};
}

/**
 * AuthInfo as the SDK transports carry it. `authorization` (the raw header)
 * is attached only so that an opted-in gateway upstream can receive it.
 */
export function authInfoFor(caller: Caller, authorization?: string) {
  const extra: Record<string, JsonValue> = {};
  if (caller.agent !== undefined) extra.agent = caller.agent;
  return {
    token: authorization ?? "",
    clientId: caller.agent ?? "local",
    scopes: [],
    extra,
  };
}

export interface StdioChannel {
  /** Resolves when the client goes away (stdin ends) or the server closes. */
  closed: Promise<void>;
  stopAccepting(): void;
  /** Resolves once everything written to stdout has been flushed. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

/** Serves one server on this process's stdin/stdout until stdin ends or `close()`. */
export async function serveStdio(host: HostedServer): Promise<StdioChannel> {
  const server = createSdkServer(host);
  const transport = new StdioServerTransport();
  const { promise: closed, resolve } = Promise.withResolvers<void>();
  const onclose = server.onclose;
  server.onclose = () => {
    onclose?.();
    resolve();
  };
  transport.onerror = (error) => host.log.warn("stdio_error", { error });
  // The SDK transport does not notice end of input; a client that quits closes our stdin.
  process.stdin.once("end", () => {
    host.log.info("stdin_closed");
    resolve();
  });
  await server.connect(transport);
  return {
    closed,
    // One client per process: nothing new can arrive but calls on this session.
    stopAccepting() {},
    // Let the last responses reach the client before the process exits.
    drain: () =>
      new Promise<void>((resolve) => process.stdout.write("", () => resolve())),
    close: () => server.close(),
  };
}

/**
 * An in-process link: the client side of a linked pair, for the gateway,
 * agents and tests. Every request on it reaches the server as `caller`.
 */
export async function connectInProcess(
  host: HostedServer,
  caller: Caller = {},
): Promise<Transport> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createSdkServer(host).connect(serverSide);
  return new CallerBoundTransport(clientSide, authInfoFor(caller));
}

/**
 * The session a caller of an in-process link acts for (the gateway runs each
 * forwarded call inside `linkedSession.run(...)`): the server behind the link
 * then keeps per-session state, such as a browser tab, per outer session.
 */
export const linkedSession = new AsyncLocalStorage<string | undefined>();

/** Attaches one identity to every message, as the HTTP face does from a bearer token. */
class CallerBoundTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport["onmessage"];

  constructor(
    private readonly inner: InMemoryTransport,
    private readonly authInfo: ReturnType<typeof authInfoFor>,
  ) {
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = (message, extra) => this.onmessage?.(message, extra);
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(...[message, options]: Parameters<Transport["send"]>): Promise<void> {
    const session = linkedSession.getStore();
    const authInfo = session === undefined ? this.authInfo : {
      ...this.authInfo,
      extra: { ...this.authInfo.extra, session },
    };
    return this.inner.send(message, { ...options, authInfo });
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
