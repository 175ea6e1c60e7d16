// The memory service's access rules (a bound caller reaches only its own
// namespace) and the at-rest encryption of sensitive entries.

import type { Caller } from "../../platform/identity.ts";
import type { Logger } from "../../platform/log.ts";
import { decrypt, encrypt } from "../../platform/secrets.ts";
import { ToolError } from "../kit/mod.ts";
import type { MemoryEntry, StoredEntry } from "./model.ts";
import type { MemoryStats } from "./stats.ts";

/** Conversations of callers not bound to an agent live here. */
export const SHARED_NAMESPACE = "_shared";

/** A bound caller reaches only its own namespace, whatever the arguments say. */
export function assertNamespace(
  caller: Caller,
  namespace: string,
  options: { stats: MemoryStats; log: Logger },
): void {
  if (caller.agent !== undefined && caller.agent !== namespace) {
    options.stats.denied++;
    options.log.warn("memory_access_denied", {
      agent: caller.agent,
      namespace,
    });
    throw new ToolError(
      `Access denied: agent "${caller.agent}" may only use its own namespace "${caller.agent}", not "${namespace}".`,
    );
  }
}

export function conversationNamespace(caller: Caller): string {
  return caller.agent ?? SHARED_NAMESPACE;
}

/** The entry with its value encrypted, bound to its namespace and key; never embedded. */
export async function sealEntry(
  dataKey: CryptoKey,
  entry: Omit<MemoryEntry, "sensitive">,
): Promise<StoredEntry> {
  const value = await encrypt(
    dataKey,
    entry.value,
    context(entry.namespace, entry.key),
  );
  return { ...entry, value, sensitive: true, embedding: null };
}

/** The entry as tools show it: sensitive values decrypted. */
export async function openEntry(
  dataKey: CryptoKey,
  entry: StoredEntry,
): Promise<MemoryEntry> {
  const value = entry.sensitive
    ? await decrypt(dataKey, entry.value, context(entry.namespace, entry.key))
    : entry.value;
  return {
    namespace: entry.namespace,
    key: entry.key,
    value,
    tags: entry.tags,
    sensitive: entry.sensitive,
    created_at: entry.created_at,
    updated_at: entry.updated_at,
  };
}

function context(namespace: string, key: string): string {
  return JSON.stringify([namespace, key]);
}
