// Tool names and origins: the one module that builds a gateway name and says
// which server and tool a listing is. A gateway name is `<group>__<tool>`, at
// most 64 characters (the limit most MCP clients and model APIs enforce);
// longer names are cut and given a hash suffix, so the same pair always maps
// to the same name, and a name cannot be split back into its parts. So a
// listing says where it comes from in its `_meta` (ORIGIN_META): every
// tools/list entry the kit builds carries `{server, tool}`, and the gateway
// replaces it with the group and upstream tool its name calls. Readers (the
// agents, the on-demand catalog, cards) read that, never the name.
//
// It lives in the kit because three layers need it and the kit is below all
// of them: the gateway builds names, the kit stamps every server's listings,
// and agents (MCP clients of the gateway, which import the kit's contract but
// no server's internals) read origins from the listings they are given.

import type { Tool } from "../../platform/mcp_sdk.ts";

export const SEPARATOR = "__";
export const MAX_TOOL_NAME = 64;
const HASH_LENGTH = 8;

/**
 * The `_meta` key of a listing naming its server and tool. Reverse-DNS
 * prefix, as MCP 2025-11-25 asks of `_meta` keys (like `io.agentd/upstream`).
 */
export const ORIGIN_META = "io.agentd/origin";

/** Which server (a gateway's replica group) and which of its tools a listing is. */
export interface ToolOrigin {
  server: string;
  tool: string;
}

export interface GatewayName {
  name: string;
  shortened: boolean;
}

export function gatewayName(group: string, tool: string): GatewayName {
  const full = `${group}${SEPARATOR}${tool}`;
  if (full.length <= MAX_TOOL_NAME) return { name: full, shortened: false };
  const head = full.slice(0, MAX_TOOL_NAME - HASH_LENGTH - 1);
  return { name: `${head}_${fnv1a(full)}`, shortened: true };
}

/**
 * Whether a name already went through two gateways (`a__b__c`): such tools
 * come from gateways of gateways, and a gateway drops them so that two that
 * register each other do not grow forever.
 */
export function nestedTwice(name: string): boolean {
  return name.split(SEPARATOR).length > 2;
}

/** `listing` with its origin in `_meta` (other `_meta` keys kept). */
export function withOrigin(listing: Tool, origin: ToolOrigin): Tool {
  return {
    ...listing,
    _meta: {
      ...listing._meta,
      [ORIGIN_META]: { server: origin.server, tool: origin.tool },
    },
  };
}

/** The origin a listing names in `_meta`; undefined when it names none. */
export function originOf(
  listing: { _meta?: Record<string, unknown> },
): ToolOrigin | undefined {
  const origin = listing._meta?.[ORIGIN_META];
  if (typeof origin !== "object" || origin === null) return undefined;
  const server = Reflect.get(origin, "server");
  const tool = Reflect.get(origin, "tool");
  return typeof server === "string" && typeof tool === "string"
    ? { server, tool }
    : undefined;
}

/** 32-bit FNV-1a as 8 hex digits: stable across runs and machines. */
function fnv1a(value: string): string {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(value)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(HASH_LENGTH, "0");
}
