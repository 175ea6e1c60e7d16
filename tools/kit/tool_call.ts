// One tools/call on a hosted server, the same for every way in: the SDK
// server's handler (stdio, HTTP, linked transports) and a direct in-process
// link. Validation, policy, audit, metrics and the tool_call line live here.

import { z } from "zod";
import {
  type CallToolResult,
  type ClientCapabilities,
  ErrorCode,
  McpError,
  type Tool,
} from "../../platform/mcp_sdk_types.ts";
import type {
  AnyServerSpec,
  DirectLink,
  DynamicTools,
  SessionPreferences,
} from "./mod.ts";
import { outerCall } from "./policy/guard.ts";
import { CallDeadlines } from "./call_deadlines.ts";
import type { Logger } from "../../platform/log.ts";
import { type ToolOrigin, withOrigin } from "./tool_names.ts";
import { ICON_TYPE, iconPath } from "./icons.ts";
import { messageOf } from "../../platform/errors.ts";
import { describeIssues } from "../../platform/validation.ts";
import type { Caller } from "../../platform/identity.ts";
import { canonicalPath, canonicalUrl } from "../../platform/canonical.ts";
import {
  type CallContext,
  type CallJudge,
  ElicitationUnsupported,
  errorResult,
  linkedSession,
  type ToolDef,
  ToolError,
} from "./mod.ts";

/** What a tool that asks for sampling or elicitation hears from a client without it. */
export const NO_SAMPLING =
  "The client does not support sampling (no `sampling` capability).";
export const NO_ELICITATION =
  "The client does not support elicitation (no `elicitation` capability).";
export const NO_FORM_ELICITATION =
  "The client does not support form-mode elicitation (its `elicitation` capability names only `url`).";
export const NO_URL_ELICITATION =
  "The client does not support URL-mode elicitation (no `elicitation.url` capability).";

/**
 * Whether a client that declared `declared` (its `elicitation` capability)
 * takes an elicitation in `mode`: an empty object means form only (MCP
 * 2025-11-25), `url` must be named.
 */
export function elicitsIn(
  declared: { form?: object; url?: object } | undefined,
  mode: "form" | "url",
): boolean {
  if (declared === undefined) return false;
  if (mode === "url") return declared.url !== undefined;
  return declared.form !== undefined || declared.url === undefined;
}

/**
 * What a call needs of the server it runs on: HostedServer is one. A port,
 * so that host.ts can hand its server its own tools (ServerDeps.own) through
 * this module without the two importing each other.
 */
export interface CallHost {
  readonly spec: AnyServerSpec;
  readonly log: Logger;
  readonly guard: CallJudge | undefined;
  readonly inFlight: { run<T>(work: () => Promise<T>): Promise<T> };
  /** Loads a server `serve` defers to its first use (at once when loaded). */
  load(): Promise<void>;
  retryStart(): Promise<void>;
  /** The handler context; throws a readable ToolError unless the server runs. */
  context(): unknown;
  dynamicTools(): DynamicTools | undefined;
  countCall(tool: string, ok: boolean, ms: number): void;
}

export interface ToolEntry {
  def: ToolDef<unknown>;
  /** The strict input parser, built on the tool's first call. */
  input(): z.ZodObject;
  /** Its tools/list entry, built at the first list that shows it. */
  listing(): Tool;
}

/** The shape MCP requires of a tool's input schema; zod's output always has it. */
const ObjectSchema = z.looseObject({
  type: z.literal("object"),
  properties: z.record(z.string(), z.looseObject({})).optional(),
  required: z.array(z.string()).optional(),
});

/**
 * A tool's tools/list entry, derived from its definition: the one way a
 * listing is built (every server's tools, the gateway's own and its
 * meta-tools). `_meta` names its origin (tool_names.ts ORIGIN_META).
 */
export function listingOf(def: ToolDef<unknown>, server: string): Tool {
  const listing: Tool = {
    name: def.name,
    description: def.description,
    inputSchema: ObjectSchema.parse(
      z.toJSONSchema(def.input.strict(), {
        target: "draft-2020-12",
        io: "input",
      }),
    ),
  };
  if (def.output !== undefined) {
    listing.outputSchema = outputSchemaOf(def.output);
  }
  if (def.title !== undefined) listing.title = def.title;
  if (def.annotations !== undefined) listing.annotations = def.annotations;
  if (def.taskSupport !== undefined) {
    listing.execution = { taskSupport: def.taskSupport };
  }
  // A path: answered as a URL where the daemon's address is known (iconsAt).
  if (def.group !== undefined) {
    listing.icons = [{ src: iconPath(server, def.group), mimeType: ICON_TYPE }];
  }
  const origin: ToolOrigin = { server, tool: def.name };
  return withOrigin(listing, origin);
}

/**
 * A tool's `outputSchema` as tools/list shows it. Converted as zod parses
 * (`io: "input"`): keys the schema does not name pass in the listed schema as
 * in the kit's check (`"output"` would forbid them in the listing only).
 */
function outputSchemaOf(output: z.ZodObject): Tool["outputSchema"] {
  return ObjectSchema.parse(
    z.toJSONSchema(output, { target: "draft-2020-12", io: "input" }),
  );
}

/**
 * Listings are derived from the spec once per server, at its first
 * tools/list or call, not once per session. Built-in servers carry theirs
 * generated ahead by this same listingOf (`spec.listings`,
 * tools/tool_listings.ts), so a start converts no schema.
 */
const catalogs = new WeakMap<AnyServerSpec, Map<string, ToolEntry>>();

export function toolCatalog(
  host: { spec: AnyServerSpec },
): Map<string, ToolEntry> {
  const spec = host.spec;
  let catalog = catalogs.get(spec);
  if (catalog) return catalog;
  catalog = new Map();
  const generated = new Map(
    (spec.listings ?? []).map((listing) => [listing.name, listing]),
  );
  for (const def of spec.tools) {
    let input: z.ZodObject | undefined;
    let listing = generated.get(def.name);
    catalog.set(def.name, {
      def,
      input: () => input ??= def.input.strict(),
      listing: () => listing ??= listingOf(def, spec.id),
    });
  }
  catalogs.set(spec, catalog);
  return catalog;
}

/** A server's own tools as its tools/list shows them, in definition order. */
export function ownListings(host: { spec: AnyServerSpec }): Tool[] {
  return [...toolCatalog(host).values()].map((entry) => entry.listing());
}

/**
 * What tools/list answers a client with `client` capabilities: the server's
 * own tools and its run-time ones (the gateway's, per client and preferences).
 */
export async function listedTools(
  host: CallHost,
  client: ClientCapabilities | undefined,
  preferences: SessionPreferences,
): Promise<Tool[]> {
  const dynamic = host.dynamicTools();
  await dynamic?.refresh?.();
  return dynamic?.listFor?.(client, preferences) ?? [
    ...ownListings(host),
    ...dynamic?.list() ?? [],
  ];
}

export interface ToolCallRequest {
  /** Names this connection for "approve for the rest of the session" where there is no MCP session. */
  connection: string;
  name: string;
  args: Record<string, unknown>;
  call: CallContext;
  /** The MCP session for the tool_call line (undefined on linked transports). */
  logSession: string | undefined;
}

export async function runToolCall(
  host: CallHost,
  request: ToolCallRequest,
): Promise<CallToolResult> {
  const { connection, name, args, call, logSession } = request;
  await host.load();
  // A server in error that retries its start does so here (off by default).
  await host.retryStart();
  const spec = host.spec;
  const catalog = toolCatalog(host);
  const entry = catalog.get(name);
  const dynamic = entry ? undefined : host.dynamicTools();
  await dynamic?.refresh?.(name);
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
    const judge = { server: spec.id, guard: host.guard, call };
    const parsed = validated(entry.def, entry.input(), args, judge);
    if (!parsed.ok) {
      host.countCall(name, false, 0);
      return parsed.result;
    }
    const def = entry.def;
    run = (call) =>
      runDefined(def, parsed.args, {
        ...judge,
        context: () => host.context(),
        call,
        rawArgs: args,
        connection,
        log: host.log,
      });
  } else {
    run = (call) => {
      host.context(); // throws the readable "not running" error
      if (!dynamic) throw new ToolError(`${name} is not available`);
      // The aggregator judges and audits what it runs where it runs it (the
      // gateway: its meta-tools, and each call where it reaches an upstream;
      // built-in servers judge at the callee), so no way in skips the
      // judgement or meets it twice. A person is asked through this call.
      return outerCall.run(
        outerCall.getStore() ?? call,
        () => dynamic.call(name, args, { ...call, connection }),
      );
    };
  }
  const started = performance.now();
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
    session: logSession,
  });
  return result;
}

/**
 * A defined tool's arguments checked against its strict input; bad ones are
 * an isError result naming every bad field, audited as an invalid call.
 */
function validated(
  def: ToolDef<unknown>,
  input: z.ZodObject,
  args: Record<string, unknown>,
  judge: { server: string; guard: CallJudge | undefined; call: CallContext },
):
  | { ok: true; args: Record<string, unknown> }
  | { ok: false; result: CallToolResult } {
  const parsed = input.safeParse(args);
  if (parsed.success) return { ok: true, args: parsed.data };
  judge.guard?.recordInvalid?.({
    server: judge.server,
    tool: def.name,
    args,
    caller: judge.call.caller,
  }, judge.call.sessionId);
  return {
    ok: false,
    result: errorResult(
      `Invalid arguments for ${def.name}: ${describeIssues(parsed.error)}`,
    ),
  };
}

/**
 * A call of a defined tool that is not in a server's catalog (the gateway's
 * meta-tools): validated, then runDefined, as tools/call does for a
 * catalog's tool.
 */
export async function runDefinedCall<C>(
  def: ToolDef<C>,
  args: Record<string, unknown>,
  options: {
    server: string;
    context: () => C;
    guard: CallJudge | undefined;
    call: CallContext;
    connection?: string;
  },
): Promise<CallToolResult> {
  const parsed = validated(def, def.input.strict(), args, options);
  if (!parsed.ok) return parsed.result;
  return await runDefined(def, parsed.args, { ...options, rawArgs: args });
}

/**
 * One defined tool's validated call under the policy: its path and URL
 * arguments made canonical, judged and audited as `<server>.<tool>` with the
 * tool's declared capabilities, then run with the same canonical values, and
 * its result checked against its output schema (the audit sees the answer
 * the caller gets).
 * Every way a ToolDef runs goes through here (the kit's dispatch, the
 * gateway's meta-tools), so none skips a part.
 */
export async function runDefined<C>(
  def: ToolDef<C>,
  parsed: Record<string, unknown>,
  options: {
    server: string;
    context: () => C;
    guard: CallJudge | undefined;
    call: CallContext;
    /** The arguments as sent: audited when the tool has no path or URL argument. */
    rawArgs: Record<string, unknown>;
    connection?: string;
    /** Where a result that breaks the tool's output schema is reported (a bug of ours). */
    log?: Logger;
  },
): Promise<CallToolResult> {
  const { guard, call } = options;
  // Judged and run with one value: the policy sees the file or address the tool opens.
  const canonical = def.argKinds === undefined
    ? parsed
    : await canonicalArgs(def, parsed, options.context);
  const handle = async () =>
    checkedOutput(
      def,
      await def.handle(options.context(), canonical, call),
      options.log,
    );
  if (!guard) return await handle();
  return await guard.run(
    {
      server: options.server,
      tool: def.name,
      args: def.argKinds === undefined ? options.rawArgs : canonical,
      caller: call.caller,
      annotations: def.annotations,
      touches: def.touches,
      argKinds: def.argKinds,
      argNames: Object.keys(def.input.shape),
    },
    call,
    handle,
    options.connection,
  );
}

/**
 * A result as the MCP SDK's McpServer lets it leave: a tool with an output
 * schema answers `structuredContent` that conforms, or the caller gets the
 * SDK's error result (`MCP error -32602: Output validation error: ...`).
 * Error results are not checked. The tool broke its own contract, so the
 * daemon's log says so too.
 */
function checkedOutput(
  def: Pick<ToolDef<unknown>, "name" | "output">,
  result: CallToolResult,
  log: Logger | undefined,
): CallToolResult {
  if (def.output === undefined || result.isError === true) return result;
  let problem: string | undefined;
  if (!result.structuredContent) {
    problem =
      `Tool ${def.name} has an output schema but no structured content was provided`;
  } else {
    const parsed = def.output.safeParse(result.structuredContent);
    if (!parsed.success) {
      problem = `Invalid structured content for tool ${def.name}: ${
        sdkIssues(parsed.error)
      }`;
    }
  }
  if (problem === undefined) return result;
  log?.error("tool_output_invalid", { tool: def.name, error: problem });
  return errorResult(
    new McpError(ErrorCode.InvalidParams, `Output validation error: ${problem}`)
      .message,
  );
}

/** zod's issues as the SDK words them: `<message> at <a.b[0]>`, one per line. */
function sdkIssues(error: z.ZodError): string {
  return error.issues.map((issue) => {
    if (issue.path.length === 0) return issue.message;
    const path = issue.path.reduce<string>(
      (at, segment, index) =>
        index === 0
          ? String(segment)
          : typeof segment === "number"
          ? `${at}[${segment}]`
          : `${at}.${String(segment)}`,
      "",
    );
    return `${issue.message} at ${path}`;
  }).join("\n");
}

/** A validated call's arguments with its path and URL arguments canonical. */
async function canonicalArgs<C>(
  def: ToolDef<C>,
  args: Record<string, unknown>,
  context: () => C,
): Promise<Record<string, unknown>> {
  const out = { ...args };
  let base: string | undefined;
  let baseKnown = false;
  for (const [name, kind] of Object.entries(def.argKinds ?? {})) {
    const value = out[name];
    if (typeof value !== "string") continue;
    if (kind === "url") {
      out[name] = canonicalUrl(value);
      continue;
    }
    if (!baseKnown) {
      base = await def.relativeTo?.(context());
      baseKnown = true;
    }
    out[name] = await canonicalPath(value, { base });
  }
  return out;
}

/** The SDK client's request timeout when none is given. */
const DEFAULT_TIMEOUT_MS = 60_000;

/** The deadlines of every direct link's calls in flight, on one timer. */
const linkDeadlines = new CallDeadlines();

/**
 * tools/call as an SDK client without capabilities gets it over a linked
 * transport bound to `caller` (same dispatch, same errors, timeout and
 * cancellation), without the JSON-RPC round trip and its schema checks.
 */
export function directLink(host: CallHost, caller: Caller): DirectLink {
  const connection = crypto.randomUUID();
  return {
    async callTool(name, args, options) {
      const signal = options.signal;
      signal?.throwIfAborted();
      const controller = new AbortController();
      const cancelled = Promise.withResolvers<never>();
      const cancel = (reason: unknown) => {
        // As the SDK: the server's signal gets the reason as text, the caller an McpError.
        controller.abort(String(reason));
        cancelled.reject(
          reason instanceof McpError
            ? reason
            : new McpError(ErrorCode.RequestTimeout, String(reason)),
        );
      };
      const timeout = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      const timedOut = () =>
        cancel(
          McpError.fromError(ErrorCode.RequestTimeout, "Request timed out", {
            timeout,
          }),
        );
      let cancelDeadline = linkDeadlines.add(timeout, timedOut);
      let settled = false;
      const onAbort = () => cancel(signal?.reason);
      signal?.addEventListener("abort", onAbort, { once: true });
      const { onProgress, onProgressReport } = options;
      const call: CallContext = {
        signal: controller.signal,
        sessionId: linkedSession.getStore(),
        caller,
        progress(progress, total, message) {
          // As the SDK: reports after the answer or a cancel reach no one.
          if (settled || controller.signal.aborted) return Promise.resolve();
          if (options.resetTimeoutOnProgress) {
            cancelDeadline();
            cancelDeadline = linkDeadlines.add(timeout, timedOut);
          }
          onProgressReport?.(progress, total, message);
          if (onProgress && message) onProgress(message);
          return Promise.resolve();
        },
        async log() {}, // the linked client asks for no log messages
        sample: () =>
          Promise.reject(
            new ToolError(NO_SAMPLING),
          ),
        elicit: options.elicit ??
          (() => Promise.reject(new ElicitationUnsupported(NO_ELICITATION))),
        ...(options.elicitationComplete === undefined
          ? {}
          : { elicitationComplete: options.elicitationComplete }),
        releaseStream() {},
      };
      const answer = runToolCall(host, {
        connection,
        name,
        args,
        call,
        logSession: undefined,
      }).catch((error) => {
        throw asReceived(error);
      });
      try {
        return await Promise.race([answer, cancelled.promise]);
      } finally {
        settled = true;
        cancelDeadline();
        signal?.removeEventListener("abort", onAbort);
      }
    },
  };
}

/** An error thrown by the dispatch as an SDK client receives it (a JSON-RPC error). */
function asReceived(error: unknown): McpError {
  const code = typeof error === "object" && error !== null
    ? Reflect.get(error, "code")
    : undefined;
  const message = error instanceof Error ? error.message : undefined;
  const data = typeof error === "object" && error !== null
    ? Reflect.get(error, "data")
    : undefined;
  return McpError.fromError(
    typeof code === "number" && Number.isSafeInteger(code)
      ? code
      : ErrorCode.InternalError,
    message ?? "Internal error",
    data,
  );
}
