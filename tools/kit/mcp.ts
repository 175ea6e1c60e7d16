// The one place that turns a server spec into MCP SDK servers. Every
// transport (stdio, streamable HTTP, in-process link) gets its SDK server
// from `createSdkServer`, so validation, logging and errors are the same.

import process from "node:process";
import { z } from "zod";
import {
  AjvJsonSchemaValidator,
  CallToolRequestSchema,
  type CallToolResult,
  CreateMessageResultSchema,
  ElicitResultSchema,
  ErrorCode,
  InMemoryTransport,
  type JsonSchemaType,
  type JsonSchemaValidator,
  type jsonSchemaValidator,
  ListToolsRequestSchema,
  type LoggingLevel,
  LoggingLevelSchema,
  McpError,
  Server,
  SetLevelRequestSchema,
  StdioServerTransport,
  type Tool,
  type Transport,
} from "../../platform/mcp_sdk_server.ts";
import type { HostedServer } from "./host.ts";
import { outerCall } from "./guard.ts";
import { messageOf } from "../../platform/errors.ts";
import { describeIssues } from "../../platform/validation.ts";
import {
  type CallContext,
  errorResult,
  identityLine,
  identityOf,
  type Peer,
  type SessionPreferences,
  type ToolDef,
  ToolError,
} from "./mod.ts";
import type { Caller } from "../../platform/identity.ts";
import {
  capabilitiesOf,
  registerCompletion,
  registerPrompts,
  registerResources,
} from "./mcp_features.ts";
import {
  authInfoFor,
  CallerBoundTransport,
  callerOf,
  linkedSessionOf,
} from "./mcp_identity.ts";

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

/**
 * The SDK builds an Ajv instance (with formats) per server by default, most
 * of a session's memory; it is only needed to check elicitation replies.
 */
class LazySchemaValidator implements jsonSchemaValidator {
  #ajv: AjvJsonSchemaValidator | undefined;

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    this.#ajv ??= new AjvJsonSchemaValidator();
    return this.#ajv.getValidator<T>(schema);
  }
}

/** One SDK server: one per HTTP session, per stdio process or per in-process link. */
export function createSdkServer(
  host: HostedServer,
  preferences: SessionPreferences = {},
): Server {
  const spec = host.spec;
  const server = new Server(
    {
      name: `agentd-${spec.id}`,
      title: spec.title,
      version: spec.version,
      description: identityLine(identityOf(spec)),
    },
    {
      capabilities: capabilitiesOf(host),
      instructions: spec.instructions,
      jsonSchemaValidator: new LazySchemaValidator(),
    },
  );
  const catalog = toolCatalog(host);
  /** Names this connection for "approve for the rest of the session" where there is no MCP session. */
  const connection = crypto.randomUUID();
  let minLevel: LoggingLevel | undefined;
  const subscriptions = new Set<string>();

  server.setRequestHandler(SetLevelRequestSchema, (request) => {
    minLevel = request.params.level;
    return {};
  });

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const dynamic = host.dynamicTools();
    await dynamic?.refresh?.();
    return {
      tools: dynamic?.listFor?.(server.getClientCapabilities(), preferences) ??
        [
          ...[...catalog.values()].map((entry) => entry.listing),
          ...dynamic?.list() ?? [],
        ],
    };
  });

  server.setRequestHandler(
    CallToolRequestSchema,
    async (request, extra): Promise<CallToolResult> => {
      const name = request.params.name;
      const args = request.params.arguments ?? {};
      const entry = catalog.get(name);
      const dynamic = entry ? undefined : host.dynamicTools();
      await dynamic?.refresh?.();
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
          host.guard?.recordInvalid({
            server: spec.id,
            tool: name,
            args,
            caller: callerOf(extra.authInfo?.extra),
          }, extra.sessionId ?? linkedSessionOf(extra.authInfo?.extra));
          return errorResult(
            `Invalid arguments for ${name}: ${describeIssues(parsed.error)}`,
          );
        }
        const handle = (call: CallContext) =>
          entry.def.handle(host.context(), parsed.data, call);
        const guard = host.guard;
        run = !guard ? handle : (call) =>
          guard.run(
            {
              server: spec.id,
              tool: name,
              args,
              caller: call.caller,
              annotations: entry.def.annotations,
            },
            call,
            () => handle(call),
            connection,
          );
      } else {
        run = (call) => {
          host.context(); // throws the readable "not running" error
          if (!dynamic) throw new ToolError(`${name} is not available`);
          // Calls to built-in servers are judged and audited at the callee, which asks a person through this call.
          const forward = () =>
            outerCall.run(
              outerCall.getStore() ?? call,
              () => dynamic.call(name, args, call),
            );
          const guard = host.guard;
          const external = guard?.externalTarget(name, spec.id);
          if (!guard || !external) return forward();
          return guard.run(
            { ...external, args, caller: call.caller },
            call,
            forward,
            connection,
          );
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

const LEVELS = LoggingLevelSchema.options;

function levelEnabled(
  min: LoggingLevel | undefined,
  level: LoggingLevel,
): boolean {
  return min === undefined || LEVELS.indexOf(level) >= LEVELS.indexOf(min);
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
/** A hosted server as its in-process peers (the gateway, the agents) see it. */
export function peerOf(host: HostedServer): Peer {
  return {
    id: host.id,
    namespace: host.spec.namespace,
    phase: () => host.phase.phase,
    error: () => host.phase.state.error,
    connect: (caller) => connectInProcess(host, caller),
    sessionClosed: (sessionId) => host.sessionClosed(sessionId),
  };
}

export async function connectInProcess(
  host: HostedServer,
  caller: Caller = {},
): Promise<Transport> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createSdkServer(host).connect(serverSide);
  return new CallerBoundTransport(clientSide, authInfoFor(caller));
}
