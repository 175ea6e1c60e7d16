// What a request to a streamable HTTP session must carry (http_session.ts):
// the session's id and a supported protocol version; for a POST, its Accept
// and Content-Type, a body within the size limit, parsed, a batch within its
// size, every message a JSON-RPC envelope the SDK's Protocol would take.

import type { JSONRPCMessage } from "../../../platform/mcp_sdk.ts";
import { SUPPORTED_PROTOCOL_VERSIONS } from "../../../platform/mcp_sdk_types.ts";
import { isMessage } from "./jsonrpc_envelope.ts";
import { bodyText, isJsonType, MAX_BODY_BYTES } from "./http_wire.ts";

/** The most messages one POST may carry (the SDK's transport refuses more too). */
export const MAX_BATCH = 100;

/** Why a POST is refused: its HTTP status, JSON-RPC code and message. */
export interface Refusal {
  status: number;
  code: number;
  message: string;
}

/** The POST's messages, or why it is refused. */
export async function readMessages(
  request: Request,
  parsedBody: unknown,
): Promise<JSONRPCMessage[] | Refusal> {
  const accept = request.headers.get("accept");
  if (
    !accept?.includes("application/json") ||
    !accept.includes("text/event-stream")
  ) {
    return {
      status: 406,
      code: -32000,
      message:
        "Not Acceptable: Client must accept both application/json and text/event-stream",
    };
  }
  if (!isJsonType(request.headers.get("content-type"))) {
    return {
      status: 415,
      code: -32000,
      message: "Unsupported Media Type: Content-Type must be application/json",
    };
  }
  let raw = parsedBody;
  if (raw === undefined) {
    const text = await bodyText(request);
    if (text === undefined) {
      return {
        status: 413,
        code: -32000,
        message:
          `Payload Too Large: Request body must not exceed ${MAX_BODY_BYTES} bytes`,
      };
    }
    try {
      raw = JSON.parse(text);
    } catch {
      return {
        status: 400,
        code: -32700,
        message: "Parse error: Invalid JSON",
      };
    }
  }
  if (Array.isArray(raw) && raw.length > MAX_BATCH) {
    return {
      status: 400,
      code: -32600,
      message: `Invalid Request: Batch must not exceed ${MAX_BATCH} messages`,
    };
  }
  const messages: unknown[] = Array.isArray(raw) ? raw : [raw];
  if (!messages.every(isMessage)) {
    return {
      status: 400,
      code: -32700,
      message: "Parse error: Invalid JSON-RPC message",
    };
  }
  return messages;
}

/** Why a request after initialization is refused: no session yet, not this one, an unknown version. */
export function sessionRefusal(
  request: Request,
  initialized: boolean,
  sessionId: string | undefined,
): Refusal | undefined {
  if (!initialized) {
    return {
      status: 400,
      code: -32000,
      message: "Bad Request: Server not initialized",
    };
  }
  const id = request.headers.get("mcp-session-id");
  if (!id) {
    return {
      status: 400,
      code: -32000,
      message: "Bad Request: Mcp-Session-Id header is required",
    };
  }
  if (id !== sessionId) {
    return { status: 404, code: -32001, message: "Session not found" };
  }
  const version = request.headers.get("mcp-protocol-version");
  if (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    return {
      status: 400,
      code: -32000,
      message:
        `Bad Request: Unsupported protocol version: ${version} (supported versions: ${
          SUPPORTED_PROTOCOL_VERSIONS.join(", ")
        })`,
    };
  }
  return undefined;
}
