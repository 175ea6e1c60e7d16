// The tool kit: how a server declares its tools, resources and prompts.
// A definition is transport-neutral; tools/kit/transport/sdk_server.ts turns a spec into an MCP
// server for stdio, HTTP or an in-process link.

import { AsyncLocalStorage } from "node:async_hooks";
import type { z } from "zod";
import type {
  CallToolResult,
  ClientCapabilities,
  ContentBlock,
  CreateMessageRequestParams,
  CreateMessageResult,
  ElicitRequestFormParams,
  ElicitRequestURLParams,
  ElicitResult,
  GetPromptResult,
  LoggingLevel,
  Prompt,
  ReadResourceResult,
  Resource,
  ServerCapabilities,
  Tool,
  ToolAnnotations,
  Transport,
} from "../../platform/mcp_sdk.ts";
import type { Phase } from "../../platform/lifecycle.ts";
import { encodeBase64 } from "../../platform/base64.ts";
import type { Logger } from "../../platform/log.ts";
import type { Metric } from "../../platform/metrics.ts";
import type { JsonValue, Store } from "../../platform/store/mod.ts";

import type { Caller } from "../../platform/identity.ts";
import type { DaemonOrigin } from "../../platform/daemon_origin.ts";
import type { ArgKind } from "../../platform/canonical.ts";
import type { Capability, ToolFacts } from "../../platform/policy.ts";
import type { AdminSection } from "./admin.ts";

/** What a handler can do while it runs, besides returning a result. */
export interface CallContext {
  readonly signal: AbortSignal;
  readonly sessionId?: string;
  readonly caller: Caller;
  /**
   * The caller's raw `Authorization` header (HTTP only). Only for upstreams
   * that opted into pass-through; never log it.
   */
  readonly authorization?: string;
  /**
   * Names the client connection where there is no MCP session (stdio, an
   * in-process link): a policy approval "for the session" lasts as long as it.
   */
  readonly connection?: string;
  /** Reports progress when the client asked for it (a progress token); otherwise a no-op. */
  progress(progress: number, total?: number, message?: string): Promise<void>;
  /** Sends a log message to the client (`notifications/message`), honouring its `logging/setLevel`. */
  log(level: LoggingLevel, data: JsonValue): Promise<void>;
  /** Asks the client's model for a completion; throws ToolError when the client cannot sample. */
  sample(params: CreateMessageRequestParams): Promise<CreateMessageResult>;
  /**
   * Asks the user for input through the client: a form, or (`mode: "url"`)
   * a page to open, for anything secret. Throws ElicitationUnsupported when
   * the client did not declare that mode.
   */
  elicit(
    params: ElicitRequestFormParams | ElicitRequestURLParams,
  ): Promise<ElicitResult>;
  /**
   * Tells this call's client that the URL-mode elicitation `elicitationId`
   * it was sent is done (`notifications/elicitation/complete`). Absent where
   * the client cannot receive it (no URL elicitation, an in-process link).
   */
  elicitationComplete?(elicitationId: string): Promise<void>;
  /**
   * Ends the HTTP stream this call answers on; the client reconnects and
   * receives the result later (SEP-1699 polling). Frees a connection during
   * a long call. A no-op where the transport cannot resume streams.
   */
  releaseStream(): void;
  /**
   * The call waits for a person (`reason`: for what, naming the pending
   * approval) or goes on (undefined). A task shows `input_required` with
   * the reason meanwhile; absent where nobody polls (a plain call).
   */
  awaiting?(reason: string | undefined): void;
}

export interface LinkedCallOptions {
  signal?: AbortSignal;
  /** The SDK client's default when absent: 60 s. */
  timeoutMs?: number;
  /** Progress messages, when the caller wants them (the SDK's `onprogress`). */
  onProgress?: (message: string) => void;
  /** Every progress report with its numbers (a forwarding gateway's `onprogress`). */
  onProgressReport?: (
    progress: number,
    total?: number,
    message?: string,
  ) => void;
  /** A progress report restarts the timeout (the SDK's option of the same name). */
  resetTimeoutOnProgress?: boolean;
  /**
   * Relays the callee's elicitations to the caller's own client (a gateway
   * forwarding its client's call: pass that call's `elicit`). Absent: the
   * callee hears that the client cannot elicit.
   */
  elicit?: CallContext["elicit"];
  /** Relays `notifications/elicitation/complete` the same way (the outer call's own). */
  elicitationComplete?: CallContext["elicitationComplete"];
}

/** One caller's in-process link to a hosted server's tools/call. */
export interface DirectLink {
  callTool(
    name: string,
    args: Record<string, unknown>,
    options: LinkedCallOptions,
  ): Promise<CallToolResult>;
}

/**
 * The session a caller of an in-process link acts for (the gateway runs each
 * forwarded call inside `linkedSession.run(...)`): the server behind the link
 * then keeps per-session state, such as a browser tab, per outer session.
 */
export const linkedSession = new AsyncLocalStorage<string | undefined>();

export type ToolResult = CallToolResult;

export interface ToolDef<C, I extends z.ZodObject = z.ZodObject> {
  /** The tool's name as clients call it (pinned by each server's seed_test.ts). */
  name: string;
  title?: string;
  description: string;
  /** Validated before the handler runs; unknown keys are rejected. */
  input: I;
  /**
   * What a successful result's `structuredContent` holds: listed as the
   * tool's `outputSchema` and checked before the answer leaves (as the MCP
   * SDK's McpServer does; a mismatch answers an error and is logged). Every
   * tool that returns `structuredContent` declares it. Keys it does not name
   * pass, here and in the listed schema alike.
   */
  output?: z.ZodObject;
  annotations?: ToolAnnotations;
  /**
   * Whether a client may run this tool as an MCP task (2025-11-25
   * `execution.taskSupport`): "optional" for work that can run long (a team
   * run, a consent flow, a long wait, a bulk import). The kit lists it and
   * runs a task-augmented call in the background on the daemon's TaskBoard
   * (tools/kit/tasks.ts); the handler sees an ordinary call whose signal a
   * tasks/cancel aborts, so it should honour `call.signal`.
   */
  taskSupport?: "optional" | "required";
  /**
   * The tool's group: the `<group>_tools.ts` module it comes from (set by
   * `gatherTools`). It is listed with its group's icon.
   */
  group?: string;
  /**
   * What the tool touches (platform/policy.ts CAPABILITIES): agents are
   * asked before each by default. Every built-in tool declares it, `[]`
   * included (tests/security/capabilities_test.ts pins the table).
   */
  touches?: readonly Capability[];
  /**
   * Arguments that name a file (`path`) or an address (`url`): they are
   * canonicalised before the policy judges them, and the handler receives
   * the canonical value (platform/canonical.ts).
   */
  argKinds?: Readonly<Record<string, ArgKind>>;
  /** Where this tool takes relative `path` arguments from (its first allowed directory). */
  relativeTo?(ctx: C): Promise<string | undefined>;
  handle(ctx: C, args: z.output<I>, call: CallContext): Promise<ToolResult>;
}

/** `const defineMemoryTool = toolDefiner<MemoryContext>()` fixes the context type once per server. */
export function toolDefiner<C>(): <I extends z.ZodObject>(
  def: ToolDef<C, I>,
) => ToolDef<C, I> {
  return (def) => def;
}

export interface ResourceDef<C> {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  /** Clients may subscribe; the server calls `notifyResourceUpdated(uri)` on change. */
  subscribable?: boolean;
  read(ctx: C, uri: URL): Promise<ReadResourceResult["contents"]>;
}

export type TemplateVariables = Record<string, string | string[]>;

export interface ResourceTemplateDef<C> {
  /** RFC 6570 template, e.g. `test://template/{id}/data`. */
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  /** Completion of one template variable from a partial value. */
  complete?(ctx: C, variable: string, value: string): Promise<string[]>;
  /** `request`: who reads (a server reading on someone's behalf reads as them). */
  read(
    ctx: C,
    uri: URL,
    variables: TemplateVariables,
    request: ListRequest,
  ): Promise<ReadResourceResult["contents"]>;
}

export interface PromptDef<C, A extends z.ZodObject = z.ZodObject> {
  name: string;
  title?: string;
  description?: string;
  /** Prompt arguments are strings in MCP: a flat object of (optional) strings. */
  args?: A;
  complete?(ctx: C, argument: string, value: string): Promise<string[]>;
  get(ctx: C, args: z.output<A>): Promise<GetPromptResult>;
}

export function promptDefiner<C>(): <A extends z.ZodObject>(
  def: PromptDef<C, A>,
) => PromptDef<C, A> {
  return (def) => def;
}

/**
 * Judges and audits one call under the operator's policy (tools/kit/policy/guard.ts
 * is the one implementation): `execute` runs only when admitted.
 */
export interface CallJudge {
  run(
    facts: ToolFacts,
    call: CallContext,
    execute: () => Promise<CallToolResult>,
    connection?: string,
  ): Promise<CallToolResult>;
  /** The audit record of a call whose arguments failed validation (it never ran). */
  recordInvalid?(facts: ToolFacts, session: string | undefined): void;
}

/** What a server receives when it starts. */
export interface ServerDeps {
  /** The shared store, already scoped to the server's namespace. */
  store: Store;
  log: Logger;
  /** The server's own config section (validated by `spec.config` when given). */
  config: Record<string, unknown>;
  dataDir: string;
  /** The process environment as the CLI saw it (API keys, AGENTD_SECRET_KEY, ...). */
  env: Readonly<Record<string, string>>;
  /** Tells subscribed clients that a resource changed. */
  resourceUpdated(uri: string): void;
  /** Tells connected clients that the tool list changed (`notifications/tools/list_changed`). */
  toolsChanged(): void;
  /** Tells connected clients that the resource list changed (`notifications/resources/list_changed`). */
  resourcesChanged(): void;
  /** Tells connected clients that the prompt list changed (`notifications/prompts/list_changed`). */
  promptsChanged(): void;
  /** The other servers of this process; given to specs that `aggregate`. */
  peers: readonly Peer[];
  /** This process's HTTP address (`http://127.0.0.1:8765`) once it listens; undefined on stdio. */
  address(): string | undefined;
  /**
   * The daemon's own origin as a browser sees it (ports, and names beyond
   * loopback): pages there carry the operator's session, so browser tools
   * refuse them (platform/daemon_origin.ts). Read per call: the port is
   * known once the HTTP face listens.
   */
  ownOrigin(): DaemonOrigin;
  /** True under `agentd mcp <id>` (the server is the whole process), false inside `agentd serve`. */
  alone: boolean;
  /**
   * Moves the running server to `error` (`reason`: what failed and the fix)
   * or back to `running`, for a failure found after start (a display that
   * went away). Ignored before start completed and after shutdown began.
   */
  setPhase(phase: "running" | "error", reason?: string): void;
  /**
   * The process's policy guard, when one runs: a server that calls out of the
   * process (the gateway's external upstreams) judges and audits those calls
   * with it, since no agentd server at the other end will.
   */
  guard?: CallJudge;
  /**
   * The server's own tools (its spec's), for a server that also serves them
   * another way (the gateway's on-demand catalog): their listings, and a
   * call through the kit's one pipeline, as tools/call runs them.
   */
  own: OwnTools;
}

/** A server's own defined tools as the kit lists and runs them. */
export interface OwnTools {
  /** As tools/list shows them, `_meta` naming each one's origin. */
  list(): Tool[];
  has(name: string): boolean;
  /** Validation, policy and audit, metrics and the tool_call line: what tools/call does. */
  call(
    name: string,
    args: Record<string, unknown>,
    call: CallContext,
  ): Promise<CallToolResult>;
}

/** Another server in this process, reachable over an in-process MCP link. */
export interface Peer {
  id: string;
  namespace: string;
  phase(): Phase;
  /** Why the peer is not running (its phase's error text), when it says. */
  error(): string | undefined;
  /** A new client-side transport whose requests reach the peer as `caller`. */
  connect(caller: Caller): Promise<Transport>;
  /** tools/list as a linked client gets it, without the JSON-RPC round trip. */
  listTools(): Promise<Tool[]>;
  /** tools/call as a linked client bound to `caller` gets it, without the JSON-RPC round trip. */
  link(caller: Caller): DirectLink;
  /** An outer MCP session the peer may have served (through a link) has ended. */
  sessionClosed(sessionId: string): void;
  /**
   * A server `serve` loads on first use: false until then. Its tools are
   * `listings` meanwhile, and `load()` loads and starts it (connect, link
   * and listTools load it too). Absent: loaded from the start.
   */
  loaded?(): boolean;
  listings?: readonly Tool[];
  load?(): Promise<void>;
}

/** What a client asked for when it opened its connection (`/mcp?tools=on_demand`, `X-Agentd-Tools`). */
export interface SessionPreferences {
  /** `on_demand`: a few meta-tools instead of every tool; `all`: every tool. */
  tools?: "all" | "on_demand";
}

/** Who asks for a run-time resource or prompt (the caller an MCP session or link carries). */
export interface ListRequest {
  caller: Caller;
  /** The client's bearer token, for a server that passes it on (the gateway's pass-through). */
  authorization?: string;
  signal: AbortSignal;
}

/**
 * Resources a server adds at run time (the gateway's upstreams'), listed
 * after its own; the server tells clients of a change with
 * `ServerDeps.resourcesChanged`.
 */
export interface DynamicResources {
  /** The resources `viewer` may read. */
  listResources(viewer: Caller): Resource[];
  /** Whether `uri` is one of `listResources()`: only those are read here. */
  hasResource(uri: string): boolean;
  readResource(uri: string, request: ListRequest): Promise<ReadResourceResult>;
}

/** Prompts a server adds at run time, like DynamicResources (`ServerDeps.promptsChanged`). */
export interface DynamicPrompts {
  /** The prompts `viewer` may get. */
  listPrompts(viewer: Caller): Prompt[];
  hasPrompt(name: string): boolean;
  /** Arguments are the callee's to check. */
  getPrompt(
    name: string,
    args: Record<string, string>,
    request: ListRequest,
  ): Promise<GetPromptResult>;
}

/** Tools a server adds at run time (the gateway's aggregate), listed after its own. */
export interface DynamicTools {
  /** Catches up with changes other daemons made in a shared store; awaited before each list and call (`tool`: the one called). */
  refresh?(tool?: string): Promise<void>;
  list(): Tool[];
  /** The whole tools/list for one client, replacing the server's own and `list()`; undefined: the usual list. */
  listFor?(
    client: ClientCapabilities | undefined,
    preferences: SessionPreferences,
  ): Tool[] | undefined;
  has(name: string): boolean;
  /** Arguments are the callee's to validate. */
  call(
    name: string,
    args: Record<string, unknown>,
    call: CallContext,
  ): Promise<ToolResult>;
}

/** What the person a browser brought to a server's callback path is told. */
export interface CallbackOutcome {
  ok: boolean;
  /** The page's heading ("Connected"). */
  title: string;
  /** One sentence: what happened and what to do; never a token. */
  message: string;
  /** The answer's status; default 200 when ok, else 400. */
  status?: number;
  /** A form under the message, posted back to the same URL (a path with `form: true`). */
  form?: CallbackForm;
  /** Sends the browser on (a provider's consent screen) instead of a page. */
  redirect?: string;
  /** A cookie to set for this path's later requests (HttpOnly, SameSite=Strict). */
  cookie?: { name: string; value: string; maxAgeS: number };
}

/** One secret field and the hidden values that come back with it. */
export interface CallbackForm {
  /** The password-type input: its name and label. */
  secret: { name: string; label: string };
  hidden: Readonly<Record<string, string>>;
  submit: string;
  /** A second button that posts `action=cancel`, when the person may refuse. */
  cancel?: string;
}

/** What a callback's handler knows of the browser's request besides its parameters. */
export interface BrowserRequest {
  method: "GET" | "POST";
  /** The URL's query (a POST's parameters are its form). */
  query: URLSearchParams;
  cookies: Readonly<Record<string, string>>;
  /** The Origin names the Host it was sent to (platform/http_guards.ts sameOrigin). */
  sameOrigin: boolean;
}

/** A path of the daemon's HTTP face that a server answers for browsers (ServerSpec.callbacks). */
export interface CallbackDef<C> {
  /**
   * Answers a GET from its query, or a POST of the page's form (with
   * `form: true`) from its fields, while the server runs.
   */
  answer(
    context: C,
    params: URLSearchParams,
    request: BrowserRequest,
  ): Promise<CallbackOutcome>;
  /** The path also takes its page's form by POST (urlencoded). */
  form?: boolean;
}

/** A started server: its context for handlers, what `/health` adds, how to stop. */
export interface ServerRuntime<C> {
  context: C;
  health?(): JsonValue | Promise<JsonValue>;
  /** The server's own Prometheus metrics, added to `/metrics`. */
  metrics?(): Metric[];
  /**
   * The server's section of `/admin` (e.g. the gateway's upstreams and
   * catalog) as `viewer` may see it: an agent-bound viewer gets no command
   * lines or URLs.
   */
  admin?(viewer: Caller): AdminSection | Promise<AdminSection>;
  /** Tools beyond the spec's own, e.g. the gateway's `<server>__<tool>` names. */
  dynamicTools?: DynamicTools;
  /** Resources beyond the spec's own (the gateway's upstreams'). */
  dynamicResources?: DynamicResources;
  /** Prompts beyond the spec's own (the gateway's upstreams'). */
  dynamicPrompts?: DynamicPrompts;
  /**
   * An MCP session ended (deleted, evicted, timed out, shut down): drop what
   * was kept for it (`CallContext.sessionId`). Also told of the sessions of
   * other servers whose calls reached this one through an in-process link.
   */
  sessionClosed?(sessionId: string): void;
  stop?(): Promise<void>;
}

/** A server's context that answers for the server itself. */
export interface ServiceContext {
  health(): JsonValue | Promise<JsonValue>;
  metrics?(): Metric[];
  stop(): Promise<void>;
}

/**
 * The runtime of a server whose context answers health, metrics (when it
 * has them) and stop; `more` adds hooks or replaces these.
 */
export function serviceRuntime<C extends ServiceContext>(
  context: C,
  more: Omit<ServerRuntime<C>, "context"> = {},
): ServerRuntime<C> {
  const runtime: ServerRuntime<C> = {
    context,
    health: () => context.health(),
    stop: () => context.stop(),
  };
  if (context.metrics !== undefined) {
    runtime.metrics = () => context.metrics?.() ?? [];
  }
  return { ...runtime, ...more };
}

export interface ServerSpec<C> {
  /** The server id: `memory`, `browser-automation`, ... (the `/mcp/<id>` path and gateway prefix). */
  id: string;
  /** `svc-<id>`. */
  namespace: string;
  title: string;
  version: string;
  instructions?: string;
  /** The server's config section; its keys are also `agentd mcp <id>` flags. */
  config?: z.ZodObject;
  tools: readonly ToolDef<C>[];
  /** tools/list entries generated ahead (tools/tool_listings.ts); a tool without one is derived at first list. */
  listings?: readonly Tool[];
  /** The server's icon and its tool groups' (tools/kit/icons.ts serves and lists them). */
  icons?: ServerIcons;
  resources?: readonly ResourceDef<C>[];
  resourceTemplates?: readonly ResourceTemplateDef<C>[];
  prompts?: readonly PromptDef<C>[];
  /**
   * The server lists resources or prompts at run time as well
   * (ServerRuntime.dynamicResources / dynamicPrompts): its capabilities say
   * so, with `listChanged`, whether it runs or not.
   */
  dynamicLists?: { resources?: boolean; prompts?: boolean };
  /** Started after every other server, which it receives as `deps.peers` (the gateway). */
  aggregates?: boolean;
  /**
   * Paths of the daemon's HTTP face that a browser is sent to and this
   * server answers (platform-auth's `/oauth/callback` and its secret page),
   * by path: GET, and POST of the page's form where `form` is set. They
   * need no daemon token (the browser carries none: the handler checks what
   * the request brings, e.g. a one-time state) but pass the Host and Origin
   * guards; the person sees a short page with the outcome
   * (tools/kit/callback_page.ts).
   */
  callbacks?: { readonly [path: string]: CallbackDef<C> };
  /** The Start phase: open what the server needs and build the handler context. */
  start(deps: ServerDeps): Promise<ServerRuntime<C>>;
}

/**
 * A server's icons (MCP 2025-11-25 `icons`): one SVG for the server, one per
 * tool group (the tools of one `*_tools.ts` module), named by the group.
 */
export interface ServerIcons {
  /** The server's own icon, an SVG document. */
  svg: string;
  groups: Readonly<Record<string, ToolGroupIcon>>;
}

export interface ToolGroupIcon {
  /** Shown by every tool whose `group` names it. */
  svg: string;
}

/** A server's identity: name, type (tool server), namespace. */
export interface ServerIdentity {
  [key: string]: string;
  name: string;
  type: "tool server";
  namespace: string;
}

export function identityOf(
  spec: { id: string; namespace: string },
): ServerIdentity {
  return { name: spec.id, type: "tool server", namespace: spec.namespace };
}

/**
 * The identity as MCP `serverInfo.description` carries it. Implementation
 * has no namespace field and SDK clients strip unknown ones, so the one free
 * text field holds it in a fixed, parseable form.
 */
export function identityLine(identity: ServerIdentity): string {
  return `name ${identity.name}; type ${identity.type}; namespace ${identity.namespace}`;
}

/**
 * What the daemon shows of a built-in server it has not loaded yet (`serve`
 * loads servers on first use): generated with its tool listings into
 * tools/<id>/tool_listings.ts, so /health, /admin, the server card and the
 * gateway know it without its module.
 */
/** The protocol versions the MCP SDK's Server negotiates (generated: tools/tool_listings.ts). */
export interface ProtocolVersions {
  /** Answered when the client asks for a version not in `supported`. */
  latest: string;
  supported: string[];
}

export interface ServerFacts {
  id: string;
  namespace: string;
  title: string;
  version: string;
  instructions?: string;
  /** Its callback paths (ServerSpec.callbacks), and whether each takes a form. */
  callbacks: Readonly<Record<string, { form: boolean }>>;
  capabilities: ServerCapabilities;
  /** It aggregates the others (the gateway): `serve` starts it up front. */
  aggregates: boolean;
}

/**
 * A spec with its context type forgotten, for registries. Sound because a
 * spec's tools and its `start` agree on `C` where the spec is written.
 */
export type AnyServerSpec = ServerSpec<unknown>;

/**
 * A server's tools gathered from its `*_tools.ts` modules (`import * as
 * group`, each exporting only tools), in `order`, the tools/list order: no
 * hand-kept arrays to go stale. A tool missing from `order`, a name there
 * with no tool, or two tools of one name fail at load, never as a list
 * silently reordered or short.
 */
export function gatherTools<C>(
  order: readonly string[],
  /** Each group's module (`import * as entry from "./entry_tools.ts"`), by group name. */
  groups: Readonly<Record<string, Readonly<Record<string, ToolDef<C>>>>>,
): ToolDef<C>[] {
  const byName = new Map<string, ToolDef<C>>();
  const problems: string[] = [];
  for (const [group, tools] of Object.entries(groups)) {
    for (const def of Object.values(tools)) {
      if (byName.has(def.name)) problems.push(`two tools named ${def.name}`);
      if (!order.includes(def.name)) {
        problems.push(`${def.name} is not in the order`);
      }
      byName.set(def.name, { ...def, group });
    }
  }
  const tools: ToolDef<C>[] = [];
  for (const name of order) {
    const def = byName.get(name);
    if (def === undefined) problems.push(`no tool named ${name}`);
    else tools.push(def);
  }
  if (problems.length > 0) {
    throw new Error(`Cannot gather tools: ${problems.join("; ")}`);
  }
  return tools;
}

export function defineServer<C>(spec: ServerSpec<C>): ServerSpec<C> {
  return spec;
}

/** A failure the caller can act on; becomes an `isError` result with this message. */
export { TaskCancelled } from "./task_cancelled.ts";

export class ToolError extends Error {
  override name = "ToolError";
  constructor(message: string, readonly content: ContentBlock[] = []) {
    super(message);
  }
}

/** The client did not declare the elicitation mode a tool asked in (CallContext.elicit). */
export class ElicitationUnsupported extends ToolError {
  override name = "ElicitationUnsupported";
}

export function text(value: string): ToolResult {
  return { content: [{ type: "text", text: value }] };
}

/** A JSON result: readable text for the model plus `structuredContent` for programs. */
export function json(value: { [key: string]: JsonValue }): ToolResult {
  return {
    content: [{ type: "text", text: JSON.stringify(value, null, 2) }],
    structuredContent: value,
  };
}

export function image(data: Uint8Array | string, mimeType: string): ToolResult {
  return { content: [imageBlock(data, mimeType)] };
}

export function imageBlock(
  data: Uint8Array | string,
  mimeType: string,
): ContentBlock {
  const base64 = typeof data === "string" ? data : encodeBase64(data);
  return { type: "image", data: base64, mimeType };
}

export function errorResult(
  message: string,
  extra: ContentBlock[] = [],
): ToolResult {
  return {
    isError: true,
    content: [{ type: "text", text: message }, ...extra],
  };
}
