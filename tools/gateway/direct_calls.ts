// A routed tools/call sent straight on the upstream's transport (the
// gateway's own HTTP and stdio client transports), beside the SDK Client
// that keeps the connection: initialize, ping, lists, resources, prompts and
// every message this module does not own go through the Client as before.
//
// Per call the SDK Client's request path checks every incoming message three
// times with zod type guards, parses the result with zod
// (`CallToolResultSchema`, which the gateway's own MCP server parses again
// before it answers its caller) and keeps a `node:` timer and an abort
// listener it never removes; that was most of what the gateway spent on a
// call above the bytes (bench/README.md, Gateway). Here a call's answer is
// matched by its id, a plain result (text blocks) is checked by hand and
// anything else by the same zod schema, a tool's output schema is checked as
// the Client checks it, and the timeouts, progress, cancellation and closing
// behave as the SDK's `Protocol.request` does for the options the gateway
// gives (the same errors, so the gateway's wording and rerouting hold).

import {
  type CallToolResult,
  CallToolResultSchema,
  ErrorCode,
  type JSONRPCMessage,
  McpError,
  RELATED_TASK_META_KEY,
  type Tool,
  type Transport,
} from "../../platform/mcp_sdk_types.ts";
import type {
  AjvJsonSchemaValidator,
  JsonSchemaType,
  JsonSchemaValidator,
} from "../../platform/mcp_sdk_server.ts";
import { lazy } from "../../platform/lazy.ts";

export interface DirectCallOptions {
  /** No answer within this long (from the call, or from its last progress report): cancelled. */
  timeoutMs: number;
  /** Cancelled after this long in all, however often it reports progress. */
  maxTotalMs: number;
  signal: AbortSignal;
  onprogress(progress: number, total?: number, message?: string): void;
}

/** Ids of this module's requests: strings, so they never meet the Client's numbers. */
const ID_PREFIX = "agentd-gw-";

interface Pending {
  settle(outcome: { result: unknown } | { error: unknown }): void;
  progress(params: Record<string, unknown>): void;
  /** performance.now() past which the call times out (moved on by progress). */
  deadline: number;
  timeout(): void;
}

/** How often pending calls are checked against their deadlines: a 16th of the timeout, within 5–250 ms. */
function tickOf(timeoutMs: number): number {
  return Math.min(250, Math.max(5, Math.floor(timeoutMs / 16)));
}

/** The direct calls on one connected transport. */
export class DirectCalls {
  readonly #transport: Transport;
  readonly #pending = new Map<string, Pending>();
  #next = 0;
  #closed = false;
  /** One timer for every pending call's deadline, instead of one per call. */
  #sweep: ReturnType<typeof setInterval> | undefined;
  #tick = Infinity;

  private constructor(transport: Transport) {
    this.#transport = transport;
    // After Client.connect (and deliverInTurns): this module's answers are
    // taken first, in arrival order; every other message goes on as before.
    const deliver = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if (!this.#take(message)) deliver?.(message, extra);
    };
    const closed = transport.onclose;
    transport.onclose = () => {
      this.#closed = true;
      this.#stopSweep();
      const error = new McpError(
        ErrorCode.ConnectionClosed,
        "Connection closed",
      );
      for (const pending of [...this.#pending.values()]) {
        pending.settle({ error });
      }
      closed?.();
    };
  }

  /** The direct calls of `transport`, which a Client has connected. */
  static of(transport: Transport): DirectCalls {
    let calls = byTransport.get(transport);
    if (calls === undefined) {
      calls = new DirectCalls(transport);
      byTransport.set(transport, calls);
    }
    return calls;
  }

  /**
   * `tools/call` of `tool` (listed as `listed`); settles as the SDK Client's
   * `callTool` would: the result, or the McpError, timeout or transport
   * error it would have thrown.
   */
  call(
    listed: Tool | undefined,
    tool: string,
    args: Record<string, unknown>,
    options: DirectCallOptions,
  ): Promise<CallToolResult> {
    const { signal } = options;
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.#closed) {
      return Promise.reject(
        new McpError(ErrorCode.ConnectionClosed, "Connection closed"),
      );
    }
    const id = `${ID_PREFIX}${this.#next++}`;
    const { promise, resolve, reject } = Promise.withResolvers<unknown>();
    const started = performance.now();
    const cancel = (reason: unknown) => {
      if (!this.#pending.has(id)) return;
      finish();
      this.#transport.send({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: id, reason: String(reason) },
      }).catch(() => {});
      reject(
        reason instanceof McpError
          ? reason
          : new McpError(ErrorCode.RequestTimeout, String(reason)),
      );
    };
    const onAbort = () => cancel(signal.reason);
    const finish = () => {
      this.#pending.delete(id);
      signal.removeEventListener("abort", onAbort);
    };
    const pending: Pending = {
      deadline: started + options.timeoutMs,
      timeout: () =>
        cancel(
          McpError.fromError(ErrorCode.RequestTimeout, "Request timed out", {
            timeout: options.timeoutMs,
          }),
        ),
      settle: (outcome) => {
        finish();
        if ("error" in outcome) reject(outcome.error);
        else resolve(outcome.result);
      },
      progress: (params) => {
        const now = performance.now();
        const elapsed = Math.round(now - started);
        if (elapsed >= options.maxTotalMs) {
          finish();
          reject(
            McpError.fromError(
              ErrorCode.RequestTimeout,
              "Maximum total timeout exceeded",
              { maxTotalTimeout: options.maxTotalMs, totalElapsed: elapsed },
            ),
          );
          return;
        }
        pending.deadline = now + options.timeoutMs;
        const { progress, total, message } = params;
        options.onprogress(
          typeof progress === "number" ? progress : 0,
          typeof total === "number" ? total : undefined,
          typeof message === "string" ? message : undefined,
        );
      },
    };
    this.#pending.set(id, pending);
    signal.addEventListener("abort", onAbort, { once: true });
    this.#startSweep(tickOf(options.timeoutMs));
    this.#transport.send({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: tool, arguments: args, _meta: { progressToken: id } },
    }).catch((error) => {
      if (!this.#pending.has(id)) return;
      finish();
      reject(error);
    });
    return promise.then(async (result) => {
      // ajv loads with the SDK's Client (this upstream's): on the first
      // output schema to check, not with the daemon.
      const validators = listed?.outputSchema === undefined
        ? undefined
        : (sharedAjv ??= await loadAjv());
      return checkedResult(listed, tool, result, validators);
    });
  }

  #startSweep(tick: number): void {
    if (this.#sweep !== undefined && tick >= this.#tick) return;
    clearInterval(this.#sweep);
    this.#tick = tick;
    // Kept between calls; it stops itself at a tick with nothing pending.
    this.#sweep = setInterval(() => {
      if (this.#pending.size === 0) return this.#stopSweep();
      const now = performance.now();
      for (const pending of [...this.#pending.values()]) {
        if (now >= pending.deadline) pending.timeout();
      }
    }, tick);
  }

  #stopSweep(): void {
    clearInterval(this.#sweep);
    this.#sweep = undefined;
    this.#tick = Infinity;
  }

  /** Settles a call of this module's from `message`; false when the message is not one of its own. */
  #take(message: JSONRPCMessage): boolean {
    if ("method" in message) {
      if (message.method !== "notifications/progress") return false;
      const params = message.params ?? {};
      const token = params.progressToken;
      if (typeof token !== "string" || !token.startsWith(ID_PREFIX)) {
        return false;
      }
      // A report after the answer is dropped, as the SDK drops it.
      this.#pending.get(token)?.progress(params);
      return true;
    }
    const id = "id" in message ? message.id : undefined;
    if (typeof id !== "string" || !id.startsWith(ID_PREFIX)) return false;
    const pending = this.#pending.get(id);
    if ("result" in message) {
      pending?.settle({ result: message.result });
    } else if ("error" in message) {
      const { code, message: text, data } = message.error;
      pending?.settle({ error: McpError.fromError(code, text, data) });
    }
    // An answer after a cancel or a timeout is dropped, as the SDK drops it.
    return true;
  }
}

const byTransport = new WeakMap<Transport, DirectCalls>();

/**
 * The result as the SDK Client's `callTool` gives it: a result of text
 * blocks (the usual case) is checked by hand, member by member as
 * `CallToolResultSchema` checks it; any other goes through that schema (its
 * error, as the Client's, is a failed call). A tool with an output schema
 * must give structured content that matches it.
 */
function checkedResult(
  listed: Tool | undefined,
  tool: string,
  result: unknown,
  ajv: AjvJsonSchemaValidator | undefined,
): CallToolResult {
  const checked = isPlainResult(result) ? result : parsed(result);
  const schema = listed?.outputSchema;
  // The caller loads ajv whenever the tool has an output schema.
  if (schema === undefined || ajv === undefined) return checked;
  if (!checked.structuredContent) {
    if (checked.isError) return checked;
    throw new McpError(
      ErrorCode.InvalidRequest,
      `Tool ${tool} has an output schema but did not return structured content`,
    );
  }
  const validated = validatorOf(ajv, schema)(checked.structuredContent);
  if (!validated.valid) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `Structured content does not match the tool's output schema: ${validated.errorMessage}`,
    );
  }
  return checked;
}

/** CallToolResultSchema's answer, failing with its error as the SDK's request does. */
function parsed(result: unknown): CallToolResult {
  const parse = CallToolResultSchema.safeParse(result);
  if (!parse.success) throw parse.error;
  return parse.data;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const TEXT_KEYS = new Set(["type", "text", "_meta"]);

/** A result `CallToolResultSchema` passes unchanged: text blocks, optional structured content, isError and `_meta`. */
export function isPlainResult(value: unknown): value is CallToolResult {
  if (!isRecord(value) || !Array.isArray(value.content)) return false;
  for (const block of value.content) {
    if (
      !isRecord(block) || block.type !== "text" ||
      typeof block.text !== "string" ||
      (block._meta !== undefined && !isRecord(block._meta))
    ) {
      return false;
    }
    for (const key in block) if (!TEXT_KEYS.has(key)) return false;
  }
  if (value.structuredContent !== undefined) {
    if (!isRecord(value.structuredContent)) return false;
  }
  if (value.isError !== undefined && typeof value.isError !== "boolean") {
    return false;
  }
  const meta = value._meta;
  if (meta !== undefined) {
    // Its progress token and related task have schemas of their own.
    if (!isRecord(meta) || "progressToken" in meta) return false;
    if (RELATED_TASK_META_KEY in meta) return false;
  }
  return true;
}

type Validator = JsonSchemaValidator<unknown>;
const validators = new WeakMap<object, Validator>();
let sharedAjv: AjvJsonSchemaValidator | undefined;

async function loadAjv(): Promise<AjvJsonSchemaValidator> {
  const { AjvJsonSchemaValidator } = await lazy<
    typeof import("../../platform/mcp_sdk_client_class.ts")
  >("../../platform/mcp_sdk_client_class.ts", import.meta.url);
  return new AjvJsonSchemaValidator();
}

/** The output schema's validator, compiled once per listed schema (after loadAjv). */
function validatorOf(
  ajv: AjvJsonSchemaValidator,
  schema: Tool["outputSchema"] & object,
): Validator {
  let validator = validators.get(schema);
  if (validator === undefined) {
    validator = ajv.getValidator(schema as JsonSchemaType);
    validators.set(schema, validator);
  }
  return validator;
}
