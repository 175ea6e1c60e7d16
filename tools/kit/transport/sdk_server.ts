// The one place that turns a server spec into MCP SDK servers. Every
// transport (stdio, streamable HTTP, in-process link) gets its SDK server
// from `createSdkServer`, so validation, logging and errors are the same.

import { z } from "zod";
import {
  type CallToolResult,
  type CreateTaskResult,
  ErrorCode,
  InMemoryTransport,
  type JsonSchemaType,
  type JsonSchemaValidator,
  type jsonSchemaValidator,
  ListToolsRequestSchema,
  type LoggingLevel,
  McpError,
  type ProgressToken,
  SetLevelRequestSchema,
  type Transport,
} from "../../../platform/mcp_sdk_server.ts";
import {
  AjvJsonSchemaValidator,
  Server,
} from "../../../platform/mcp_sdk_server.ts";
import type { HostedServer } from "../host.ts";
import { iconsAt, serverInfoIcons } from "../icons.ts";
import { listedTools, runToolCall } from "../tool_call.ts";
import { identityLine, identityOf, type SessionPreferences } from "../mod.ts";
import { sdkCallContext } from "./sdk_call.ts";
import {
  refuseUntasked,
  registerTaskHandlers,
  startTask,
} from "./sdk_tasks.ts";
import type { Caller } from "../../../platform/identity.ts";
import {
  capabilitiesOf,
  registerCompletion,
  registerPrompts,
  registerResources,
} from "./sdk_features.ts";
import { authInfoFor, CallerBoundTransport } from "./identity.ts";
import { DenoStdioTransport, type StdioStreams } from "./stdio_server.ts";

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

/** Where the client of an HTTP request reached the daemon (`http://host:port`). */
function originOfRequest(
  info:
    | { url?: URL; headers: Record<string, string | string[] | undefined> }
    | undefined,
): string | undefined {
  if (info === undefined) return undefined;
  if (info.url !== undefined) return info.url.origin;
  const host = info.headers.host;
  return typeof host === "string" ? `http://${host}` : undefined;
}

/**
 * tools/call as registered with the SDK's Server: the Server's wrapper checks
 * each request against CallToolRequestSchema before the handler runs (and its
 * result after), so the schema the Protocol parses with first names the
 * method only: a call's request is parsed once, not twice. The handler reads
 * the checked params (`callParams`).
 */
const CallToolMethod = z.looseObject({ method: z.literal("tools/call") });

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A tools/call's params, read after the SDK's CallToolRequestSchema check. */
function callParams(params: unknown): {
  name: string;
  args: Record<string, unknown>;
  task: { ttl: number | undefined } | undefined;
  progressToken: ProgressToken | undefined;
} {
  // The SDK refused the request before the handler otherwise.
  if (!isRecord(params) || typeof params.name !== "string") {
    throw new McpError(
      ErrorCode.InvalidParams,
      "Invalid tools/call request: params.name must be a string",
    );
  }
  const { task, _meta: meta } = params;
  const token = isRecord(meta) ? meta.progressToken : undefined;
  return {
    name: params.name,
    args: isRecord(params.arguments) ? params.arguments : {},
    task: isRecord(task)
      ? { ttl: typeof task.ttl === "number" ? task.ttl : undefined }
      : undefined,
    progressToken: typeof token === "string" || typeof token === "number"
      ? token
      : undefined,
  };
}

/**
 * Connects `server` to a kit transport (stdio, a streamable HTTP session).
 * Those hand on only messages their envelope check let through
 * (jsonrpc_envelope.ts), each a request, notification or response by its
 * shape; the SDK's Protocol tells them apart again with up to three zod
 * parses per message (a failed one builds its issues' messages). Here they go
 * by shape to the same Protocol methods; an SDK without them keeps its own
 * dispatch (`tests/tools/sdk_dispatch_test.ts` pins that this one has them).
 */
export async function connectChecked(
  server: Server,
  transport: Transport,
): Promise<void> {
  const before = transport.onmessage;
  await server.connect(transport);
  const request: unknown = Reflect.get(server, "_onrequest");
  const notification: unknown = Reflect.get(server, "_onnotification");
  const response: unknown = Reflect.get(server, "_onresponse");
  if (
    typeof request !== "function" || typeof notification !== "function" ||
    typeof response !== "function"
  ) return;
  transport.onmessage = (message, extra) => {
    before?.(message, extra);
    if (!("method" in message)) response.call(server, message);
    else if ("id" in message) request.call(server, message, extra);
    else notification.call(server, message);
  };
}

/** One SDK server: one per HTTP session, per stdio process or per in-process link. */
export function createSdkServer(
  host: HostedServer,
  preferences: SessionPreferences = {},
  /** Who opened this session, when one identity holds it (HTTP sessions, stdio, links). */
  owner?: Caller,
): Server {
  const spec = host.spec;
  const capabilities = capabilitiesOf(host);
  const server = new Server(
    {
      name: `agentd-${spec.id}`,
      title: spec.title,
      version: spec.version,
      description: identityLine(identityOf(spec)),
      icons: serverInfoIcons(spec),
    },
    {
      capabilities,
      instructions: spec.instructions,
      jsonSchemaValidator: new LazySchemaValidator(),
    },
  );
  /** Names this connection for "approve for the rest of the session" where there is no MCP session. */
  const connection = crypto.randomUUID();
  let minLevel: LoggingLevel | undefined;
  const subscriptions = new Set<string>();

  server.setRequestHandler(SetLevelRequestSchema, (request) => {
    minLevel = request.params.level;
    return {};
  });

  server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => ({
    tools: iconsAt(
      await listedTools(host, server.getClientCapabilities(), preferences),
      originOfRequest(extra.requestInfo),
    ),
  }));

  server.setRequestHandler(
    CallToolMethod,
    async (request, extra): Promise<CallToolResult | CreateTaskResult> => {
      const { name, args, task, progressToken } = callParams(request.params);
      if (task !== undefined) {
        return await startTask({
          server,
          host,
          extra,
          name,
          args,
          ttl: task.ttl,
          progressToken,
          connection,
          minLevel: () => minLevel,
        });
      }
      refuseUntasked(host, name);
      const { call, end } = sdkCallContext({
        server,
        host,
        extra,
        tool: name,
        progressToken,
        minLevel: () => minLevel,
      });
      try {
        return await runToolCall(host, {
          connection,
          name,
          args,
          call,
          logSession: extra.sessionId,
        });
      } finally {
        await end();
      }
    },
  );

  if (capabilities.tasks) registerTaskHandlers(server, host);
  registerResources(server, host, subscriptions);
  registerPrompts(server, host);
  registerCompletion(server, host);

  // A session hears of a change to the run-time lists (the gateway's
  // upstreams') only when its own view changed: an agent is not told of
  // upstreams it may not list.
  const viewer: Caller = owner ?? {};
  const viewOf = (list: readonly unknown[] | undefined) =>
    list === undefined ? undefined : JSON.stringify(list);
  let resourcesSeen = viewOf(host.dynamicResources()?.listResources(viewer));
  let promptsSeen = viewOf(host.dynamicPrompts()?.listPrompts(viewer));

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
    resourcesChanged() {
      if (server.getClientCapabilities() === undefined) return;
      if (!capabilities.resources) return;
      const view = viewOf(host.dynamicResources()?.listResources(viewer));
      if (view !== undefined && view === resourcesSeen) return;
      resourcesSeen = view;
      server.sendResourceListChanged().catch((error) =>
        host.log.debug("notify_failed", { error })
      );
    },
    promptsChanged() {
      if (server.getClientCapabilities() === undefined) return;
      if (!capabilities.prompts) return;
      const view = viewOf(host.dynamicPrompts()?.listPrompts(viewer));
      if (view !== undefined && view === promptsSeen) return;
      promptsSeen = view;
      server.sendPromptListChanged().catch((error) =>
        host.log.debug("notify_failed", { error })
      );
    },
  };
  host.listeners.add(listener);
  // An operator's session whose client can elicit is asked about pending approvals.
  let unregister: (() => void) | undefined;
  const guard = host.guard;
  if (guard && owner !== undefined && owner.agent === undefined) {
    server.oninitialized = () => {
      if (!server.getClientCapabilities()?.elicitation || unregister) return;
      unregister = guard.addOperatorClient({
        elicit: (params, { signal, timeout }) =>
          server.elicitInput(params, { signal, timeout }),
      });
    };
  }
  const previousOnClose = server.onclose;
  server.onclose = () => {
    host.listeners.delete(listener);
    unregister?.();
    previousOnClose?.();
  };
  return server;
}

export interface StdioChannel {
  /** Resolves when the client goes away (stdin ends) or the server closes. */
  closed: Promise<void>;
  stopAccepting(): void;
  /** Resolves once everything written to stdout has been flushed. */
  drain(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Serves one server on this process's stdin/stdout until stdin ends or
 * `close()`; `streams` when the stdio front (cli/stdio_front.ts) hands over.
 */
export async function serveStdio(
  host: HostedServer,
  streams?: StdioStreams,
): Promise<StdioChannel> {
  // Whoever runs the process on stdio is the local operator.
  const server = createSdkServer(host, {}, {});
  const transport = new DenoStdioTransport(streams);
  const { promise: closed, resolve } = Promise.withResolvers<void>();
  const onclose = server.onclose;
  server.onclose = () => {
    onclose?.();
    resolve();
  };
  transport.onerror = (error) => host.log.warn("stdio_error", { error });
  // End of input leaves the transport open: answers to calls under way still go out.
  transport.ended.then(() => {
    host.log.info("stdin_closed");
    resolve();
  });
  await connectChecked(server, transport);
  return {
    closed,
    // One client per process: nothing new can arrive but calls on this session.
    stopAccepting() {},
    // Let the last responses reach the client before the process exits.
    drain: () => transport.drain(),
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
  await host.load();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createSdkServer(host, {}, caller).connect(serverSide);
  return new CallerBoundTransport(clientSide, authInfoFor(caller));
}
