// Gateway tool names: `<group>__<tool>`, at most 64 characters (the limit
// most MCP clients and model APIs enforce). Longer names are cut and given a
// hash suffix, so the same pair always maps to the same name.

export const SEPARATOR = "__";
export const MAX_TOOL_NAME = 64;
const HASH_LENGTH = 8;

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

/** 32-bit FNV-1a as 8 hex digits: stable across runs and machines. */
function fnv1a(value: string): string {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(value)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(HASH_LENGTH, "0");
}
