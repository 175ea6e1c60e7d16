// The JSON-RPC envelope check both kit server transports (stdio, streamable
// HTTP) apply to each incoming message instead of the SDK transports' zod
// parse: its shape only, strict as the SDK's schemas, so every message let
// through is one the SDK's Protocol answers. The client transports check less
// (`looksLikeMessage`): the SDK's Client validates what they pass on.

import {
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
} from "../../../platform/mcp_sdk_types.ts";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** zod's `int()`, which the SDK's ids and error codes use, takes safe integers only. */
function isId(value: unknown): boolean {
  return typeof value === "string" || Number.isSafeInteger(value);
}

/** A `_meta` the SDK checks (progress token, related task): left to its own guard. */
function hasMeta(value: unknown): boolean {
  return isRecord(value) && value._meta !== undefined;
}

const REQUEST_KEYS = new Set(["jsonrpc", "id", "method", "params"]);
const RESULT_KEYS = new Set(["jsonrpc", "id", "result"]);
const ERROR_KEYS = new Set(["jsonrpc", "id", "error"]);

/**
 * Why `value` is not a JSON-RPC request, notification, result or error, as
 * the SDK's envelope schemas (strict objects) see it; undefined when it is
 * one. Every message accepted here is one the SDK's Protocol handles (it
 * drops the others unanswered): a `_meta` is checked by the SDK's own guard,
 * the rest of params and results by its Protocol.
 */
export function envelopeProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return "not an object";
  if (value.jsonrpc !== "2.0") return 'jsonrpc is not "2.0"';
  let keys: Set<string>;
  let guard: ((value: unknown) => boolean) | undefined;
  if ("method" in value) {
    if (typeof value.method !== "string") return "method is not a string";
    if ("id" in value && !isId(value.id)) return "bad id";
    if (value.params !== undefined && !isRecord(value.params)) {
      return "params is not an object";
    }
    if (hasMeta(value.params)) {
      guard = "id" in value ? isJSONRPCRequest : isJSONRPCNotification;
    }
    keys = REQUEST_KEYS;
  } else if ("result" in value) {
    if (!isId(value.id)) return "bad id";
    if (!isRecord(value.result)) return "result is not an object";
    if (hasMeta(value.result)) guard = isJSONRPCResultResponse;
    keys = RESULT_KEYS;
  } else if ("error" in value) {
    if (value.id !== undefined && !isId(value.id)) return "bad id";
    const error = value.error;
    if (
      !isRecord(error) || !Number.isSafeInteger(error.code) ||
      typeof error.message !== "string"
    ) {
      return "error needs an integer code and a message";
    }
    keys = ERROR_KEYS;
  } else {
    return "no method, result or error";
  }
  for (const key in value) {
    if (!keys.has(key)) return `unexpected member "${key}"`;
  }
  // Rare (progress tokens, tasks): the SDK's zod parse only then.
  if (guard && !guard(value)) return "_meta is not what the SDK accepts";
  return undefined;
}

/** The type side of `envelopeProblem`: the SDK's Protocol checks the rest. */
export function isMessage(value: unknown): value is JSONRPCMessage {
  return envelopeProblem(value) === undefined;
}

/**
 * The client transports' check (the gateway's upstream side): the JSON-RPC
 * 2.0 envelope, checked cheaply, since the SDK's Client checks params and
 * results against its schemas.
 */
export function looksLikeMessage(value: unknown): value is JSONRPCMessage {
  if (typeof value !== "object" || value === null) return false;
  if (Reflect.get(value, "jsonrpc") !== "2.0") return false;
  const method = Reflect.get(value, "method");
  if (method !== undefined) return typeof method === "string";
  const id = Reflect.get(value, "id");
  const idOk = typeof id === "string" || typeof id === "number" ||
    id === undefined;
  const result = Reflect.get(value, "result");
  const error = Reflect.get(value, "error");
  return idOk && (
    (typeof result === "object" && result !== null) ||
    (typeof error === "object" && error !== null)
  );
}
