// Big results kept as MCP resources of the session that made them (a page's
// HTML, a screenshot, a long memory listing). The tool result carries a
// summary and the URI (never a silent cut); the content is read back whole
// with resources/read until the session ends (the server's `sessionClosed`
// calls `forget`) or the oldest results leave beyond the byte cap.

import { encodeBase64 } from "../../platform/base64.ts";
import type { ReadResourceResult } from "../../platform/mcp_sdk.ts";
import type { CallContext, ResourceTemplateDef } from "./mod.ts";
import type { Caller } from "../../platform/identity.ts";

interface Stored {
  session: string;
  /** The agent whose call made it (undefined: the operator's). */
  agent: string | undefined;
  mimeType: string;
  name: string;
  data: string | Uint8Array;
  bytes: number;
}

export interface StoredResult {
  uri: string;
  name: string;
  mimeType: string;
  bytes: number;
}

export class SessionResults {
  readonly #prefix: string;
  readonly #maxBytes: number;
  /** Insertion order is age order: the oldest leave first beyond the cap. */
  readonly #results = new Map<string, Stored>();
  #bytes = 0;

  /** `prefix`: the URI before the id, e.g. `agentd://memory/results/`. */
  constructor(prefix: string, maxBytes: number) {
    this.#prefix = prefix;
    this.#maxBytes = maxBytes;
  }

  get count(): number {
    return this.#results.size;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Keeps `data` for the session of `call` (by its agent without a
   * session); the URI is unguessable (a UUID), and only that caller reads it.
   */
  put(
    call: CallContext,
    name: string,
    mimeType: string,
    data: string | Uint8Array,
  ): StoredResult {
    const id = crypto.randomUUID();
    const bytes = typeof data === "string"
      ? new TextEncoder().encode(data).length
      : data.length;
    this.#results.set(id, {
      session: resultSession(call),
      agent: call.caller.agent,
      mimeType,
      name,
      data,
      bytes,
    });
    this.#bytes += bytes;
    for (const [old, stored] of this.#results) {
      if (this.#bytes <= this.#maxBytes || old === id) break;
      this.#results.delete(old);
      this.#bytes -= stored.bytes;
    }
    return { uri: `${this.#prefix}${id}`, name, mimeType, bytes };
  }

  /** `reader` reads what its own calls made: another caller's URI reads as unknown. */
  read(
    uri: string,
    id: string,
    reader: Caller,
  ): ReadResourceResult["contents"] {
    const stored = this.#results.get(id);
    if (!stored || stored.agent !== reader.agent) {
      throw new Error(
        `Resource ${uri} is unknown or expired (results live as long as the MCP session that made them)`,
      );
    }
    return [
      typeof stored.data === "string"
        ? { uri, mimeType: stored.mimeType, text: stored.data }
        : { uri, mimeType: stored.mimeType, blob: encodeBase64(stored.data) },
    ];
  }

  /** The session (`session:<id>`, or `agent:<name>` without one) ended: its results go with it. */
  forget(session: string): void {
    for (const [id, stored] of this.#results) {
      if (stored.session !== session) continue;
      this.#results.delete(id);
      this.#bytes -= stored.bytes;
    }
  }
}

/** The content block pointing at a stored result. */
export function resourceLink(stored: StoredResult): {
  type: "resource_link";
  uri: string;
  name: string;
  mimeType: string;
  size: number;
} {
  return {
    type: "resource_link",
    uri: stored.uri,
    name: stored.name,
    mimeType: stored.mimeType,
    size: stored.bytes,
  };
}

/**
 * The `result` resource template (`<prefix>{id}`) that reads back what
 * `results(ctx)` keeps for a server's sessions.
 */
export function resultsTemplate<C>(
  prefix: string,
  results: (ctx: C) => SessionResults,
  about: { title: string; description: string; mimeType?: string },
): ResourceTemplateDef<C> {
  return {
    uriTemplate: `${prefix}{id}`,
    name: "result",
    ...about,
    read(ctx, uri, variables, request) {
      const id = variables.id;
      return Promise.resolve(
        results(ctx).read(
          uri.href,
          typeof id === "string" ? id : "",
          request.caller,
        ),
      );
    },
  };
}

/** Whose results a call's are: its MCP session's, else its agent's (in-process calls). */
export function resultSession(call: CallContext): string {
  if (call.sessionId) return `session:${call.sessionId}`;
  return call.caller.agent ? `agent:${call.caller.agent}` : "default";
}
