// A hosted server as its in-process peers (the gateway, the agents) see it.
// Apart from sdk_server.ts, which `serve` loads on the first connection (an
// MCP session, the gateway's link to a server): the SDK's Server and
// Protocol, ajv and zod 3 stay out of an idle daemon.

import type { Transport } from "../../../platform/mcp_sdk_types.ts";
import { lazy } from "../../../platform/lazy.ts";
import type { Caller } from "../../../platform/identity.ts";
import type { HostedServer } from "../host.ts";
import type { Peer } from "../mod.ts";
import { directLink, listedTools } from "../tool_call.ts";

export function peerOf(host: HostedServer): Peer {
  return {
    id: host.id,
    namespace: host.spec.namespace,
    phase: () => host.phase.phase,
    error: () => host.phase.state.error,
    connect: (caller) => connectInProcess(host, caller),
    // A linked client declares no capabilities: the SDK's Client sends `{}`.
    listTools: async () => {
      await host.load();
      return listedTools(host, {}, {});
    },
    link: (caller) => directLink(host, caller),
    sessionClosed: (sessionId) => host.sessionClosed(sessionId),
    loaded: () => host.loaded,
    listings: host.deferredListings,
    load: () => host.load(),
  };
}

/** sdk_server.ts's connectInProcess, that module loaded on first use. */
async function connectInProcess(
  host: HostedServer,
  caller: Caller,
): Promise<Transport> {
  const sdk = await lazy<typeof import("./sdk_server.ts")>(
    "./sdk_server.ts",
    import.meta.url,
  );
  return await sdk.connectInProcess(host, caller);
}
