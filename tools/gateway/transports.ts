// How the gateway reaches one upstream: the transport for an in-process link,
// streamable HTTP (with optional Authorization pass-through, on the gateway's
// own lean transport: tools/kit/transport/http_client.ts) or a stdio child.

import { AsyncLocalStorage } from "node:async_hooks";
import type { Transport } from "../../platform/mcp_sdk_types.ts";
import type { Client } from "../../platform/mcp_sdk_client_class.ts";
import { lazy } from "../../platform/lazy.ts";
import type { Logger } from "../../platform/log.ts";
import { VERSION } from "../../platform/version.ts";
import { HttpClientTransport } from "../kit/transport/http_client.ts";
import { StdioUpstreamTransport } from "../kit/transport/stdio_client.ts";
import type { Peer } from "../kit/mod.ts";

export type UpstreamTarget =
  | { kind: "builtin"; peer: Peer }
  | {
    kind: "http";
    url: string;
    headers: Readonly<Record<string, string>>;
    passThroughAuth: boolean;
  }
  | {
    kind: "stdio";
    command: string;
    args: readonly string[];
    env: Readonly<Record<string, string>>;
    cwd?: string;
  };

/** The caller's Authorization header during a routed call, for pass-through upstreams. */
export const passThrough = new AsyncLocalStorage<string | undefined>();

export interface TransportOptions {
  /** The upstream's name, for log lines. */
  upstream: string;
  log: Logger;
  /** A stdio child's transport closed (the process ended). */
  onExit(): void;
}

/** Opens (but does not connect) the transport to `target`. */
export async function openTransport(
  target: UpstreamTarget,
  options: TransportOptions,
): Promise<Transport> {
  if (target.kind === "builtin") {
    if (target.peer.phase() !== "running") {
      throw new Error(`server "${target.peer.id}" is ${target.peer.phase()}`);
    }
    return await target.peer.connect({});
  }
  if (target.kind === "http") {
    return new HttpClientTransport(new URL(target.url), {
      headers: target.headers,
      authorization: target.passThroughAuth
        ? () => passThrough.getStore()
        : undefined,
    });
  }
  const transport = new StdioUpstreamTransport({
    command: target.command,
    args: target.args,
    env: target.env,
    cwd: target.cwd,
    // The child's stderr becomes our JSON log lines; never raw bytes on our stderr.
    onStderrLine: (line) =>
      options.log.debug("upstream_stderr", {
        upstream: options.upstream,
        line: line.slice(0, 2000),
      }),
  });
  // Client.connect keeps this handler and chains its own after it.
  transport.onclose = () => options.onExit();
  return transport;
}

/**
 * Hands `transport`'s messages to its (connected) client one per microtask
 * turn, in order. The SDK's Protocol runs notification handlers a microtask
 * later but settles a response at once: a progress report read in one chunk
 * with the answer after it (a stdio child writes both at once) would find
 * its call already settled and be dropped. Call after `client.connect`.
 */
export function deliverInTurns(transport: Transport): void {
  const deliver = transport.onmessage;
  if (deliver === undefined) return;
  let turn = Promise.resolve();
  transport.onmessage = (message, extra) => {
    turn = turn.then(() => deliver(message, extra)).catch((error) =>
      transport.onerror?.(
        error instanceof Error ? error : new Error(String(error)),
      )
    );
  };
}

/** An SDK client; its module (the SDK's Protocol, ajv) loads on the first connection, not at start. */
export async function newClient(): Promise<Client> {
  const { Client } = await lazy<
    typeof import("../../platform/mcp_sdk_client_class.ts")
  >("../../platform/mcp_sdk_client_class.ts", import.meta.url);
  return new Client(
    { name: "agentd-gateway", version: VERSION },
    { capabilities: {} },
  );
}
