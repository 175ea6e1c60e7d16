// An MCP session over the kit's streamable HTTP endpoint in process (no
// socket): the server hosted, the session initialized, ready for calls.

import assert from "node:assert/strict";
import { MemoryStore } from "../../platform/store/memory.ts";
import { HostedServer } from "../../tools/kit/host.ts";
import { McpHttpEndpoint } from "../../tools/kit/transport/http_server.ts";
import type { AnyServerSpec } from "../../tools/kit/mod.ts";
import type { LogLevel } from "../../platform/log.ts";
import { capturedLog, INITIALIZE_REQUEST, waitFor } from "../helpers.ts";

export const ACCEPT = "application/json, text/event-stream";

/** `spec` hosted on an in-memory store, with its log lines (from `level` on) captured. */
export async function startHost(spec: AnyServerSpec, level?: LogLevel) {
  const { log, logs } = capturedLog(level);
  const host = await HostedServer.start(spec, {
    store: new MemoryStore(),
    log,
    config: {},
    dataDir: "/nonexistent",
  });
  return { host, log, logs };
}

export interface PostOptions {
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** A session of `spec` through McpHttpEndpoint, initialized (the initialize answer must be JSON). */
export async function httpSession(spec: AnyServerSpec, level?: LogLevel) {
  const { host, log, logs } = await startHost(spec, level);
  const endpoint = new McpHttpEndpoint(host, { log, idleTimeoutMs: 60_000 });
  const send = (method: string, body?: string, options: PostOptions = {}) =>
    endpoint.handle(
      new Request("http://127.0.0.1/mcp", {
        method,
        headers: {
          "content-type": "application/json",
          accept: ACCEPT,
          ...options.headers,
        },
        body,
        signal: options.signal,
      }),
    );
  const init = await send("POST", JSON.stringify(INITIALIZE_REQUEST));
  assert.equal(init.status, 200);
  assert.equal(init.headers.get("content-type"), "application/json");
  const id = init.headers.get("mcp-session-id");
  assert.ok(id);
  await init.text();
  const sessionHeaders = {
    "mcp-session-id": id,
    "mcp-protocol-version": "2025-11-25",
  };
  /** POSTs `body` (a string as it is) in the session; `headers` add to or replace the session's. */
  const inSession = (body: unknown, options: PostOptions = {}) =>
    send("POST", typeof body === "string" ? body : JSON.stringify(body), {
      headers: { ...sessionHeaders, ...options.headers },
      signal: options.signal,
    });
  const initialized = await inSession({
    jsonrpc: "2.0",
    method: "notifications/initialized",
  });
  assert.equal(initialized.status, 202);
  return {
    id,
    endpoint,
    /** The log lines of the host and endpoint so far. */
    logs,
    inSession,
    remove: () => send("DELETE", undefined, { headers: sessionHeaders }),
    /** No request of the session is still waiting for its answer. */
    idle: () => endpoint.drain(0),
    /** Until the server has a request of this session running. */
    busy: () => waitFor(() => endpoint.drain(0), (idle) => !idle),
    async [Symbol.asyncDispose]() {
      await endpoint.close();
      await host.stop(1000);
    },
  };
}

/** A `tools/call` of `name` without arguments, with `meta` as its `_meta`. */
export function call(id: unknown, name: string, meta?: unknown) {
  return {
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name, arguments: {}, ...meta !== undefined && { _meta: meta } },
  };
}
