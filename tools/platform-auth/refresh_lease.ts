// One refresh at a time across every daemon sharing the store: the refresher
// holds a lease (owner + expiry, taken with a checked commit); the others
// wait for the tokens it saves and use them, so a rotated refresh token is
// spent once. A holder that dies frees the platform when its lease expires.

import type { Logger } from "../../platform/log.ts";
import { ToolError } from "../kit/mod.ts";
import type { PlatformAuthConfig } from "./config.ts";
import type { PlatformRecord, TokenSet, Vault } from "./vault.ts";

/** How often a waiting daemon reads the stored tokens again. */
const POLL_MS = 50;

export interface SharedRefresh {
  vault: Vault;
  /** This daemon's lease owner id. */
  owner: string;
  ttlMs: number;
  log: Logger;
  stopped(): boolean;
  require(platform: string): Promise<PlatformRecord>;
  /** Throws when the platform cannot be refreshed without a person. */
  checkRefreshable(record: PlatformRecord): void;
  /** The refresh itself, run while holding the lease. */
  refresh(
    record: PlatformRecord,
    tokens: TokenSet | undefined,
    trigger: string,
  ): Promise<TokenSet>;
  /** Tokens another daemon (or an earlier holder) saved meanwhile. */
  adopt(platform: string, tokens: TokenSet, trigger: string): void;
}

/** Long enough for every attempt of one refresh, discovery and backoff included. */
export function leaseTtlMs(config: PlatformAuthConfig): number {
  let backoff = 0;
  for (let attempt = 0; attempt < config.refresh_retries; attempt++) {
    backoff += config.retry_backoff_ms * 2 ** attempt;
  }
  return (config.refresh_retries + 2) * config.http_timeout_ms + backoff +
    5_000;
}

/**
 * Refreshes `platform` unless its tokens changed since `seenVersion` (then
 * those are the answer): takes the lease, or waits for the holder's result.
 */
export async function refreshShared(
  shared: SharedRefresh,
  platform: string,
  seenVersion: string | null,
  trigger: string,
): Promise<TokenSet> {
  const giveUpAt = Date.now() + 2 * shared.ttlMs;
  let waiting = false;
  for (;;) {
    if (
      await shared.vault.takeRefreshLease(platform, shared.owner, shared.ttlMs)
    ) {
      try {
        const current = await shared.vault.tokenEntry(platform);
        if (current.tokens && current.version !== seenVersion) {
          shared.adopt(platform, current.tokens, trigger);
          return current.tokens;
        }
        const record = await shared.require(platform);
        shared.checkRefreshable(record);
        return await shared.refresh(record, current.tokens, trigger);
      } finally {
        // Unreleased (store away), the lease frees the platform when it expires.
        await shared.vault.releaseRefreshLease(platform, shared.owner)
          .catch(() => {});
      }
    }
    if (!waiting) {
      waiting = true;
      shared.log.debug("refresh_lease_wait", { platform });
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const current = await shared.vault.tokenEntry(platform);
    if (current.tokens && current.version !== seenVersion) {
      shared.adopt(platform, current.tokens, trigger);
      return current.tokens;
    }
    // The holder's refresh was rejected: the platform says so.
    shared.checkRefreshable(await shared.require(platform));
    if (shared.stopped() || Date.now() > giveUpAt) {
      throw new ToolError(
        `Another daemon is refreshing "${platform}" and did not finish in time; try again`,
      );
    }
  }
}
