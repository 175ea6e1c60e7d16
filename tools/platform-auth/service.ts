// The platform-auth context: platforms, their tokens, and keeping those
// fresh. One refresh at a time per platform, in this process (a mutex) and
// across daemons sharing the store (a lease, refresh_lease.ts); a rotated
// refresh token is saved before the new access token is handed to anyone.

import type { Logger } from "../../platform/log.ts";
import { Mutex } from "../../platform/mutex.ts";
import type { TokenEndpointResponse } from "./oauth.ts";
import { messageOf } from "../../platform/errors.ts";
import { ToolError } from "../kit/mod.ts";
import type { Alerts } from "./alerts.ts";
import { type Clock, sleep } from "./clock.ts";
import type { PlatformAuthConfig } from "./config.ts";
import {
  clientCredentialsGrant,
  GrantRejected,
  type Provider,
  ProviderUnavailable,
  refreshGrant,
  resolveProvider,
} from "./provider.ts";
import type { AuthStatus, PlatformRecord, TokenSet, Vault } from "./vault.ts";
import {
  leaseTtlMs,
  refreshShared,
  type SharedRefresh,
} from "./refresh_lease.ts";

export type Operation =
  | "authorize"
  | "exchange"
  | "refresh"
  | "revoke"
  | "get"
  | "validate"
  | "client_credentials"
  | "device"
  | "probe";

export interface Counters {
  refreshes: Map<string, number>;
  failures: Map<string, number>;
}

export class PlatformAuth {
  readonly #providers = new Map<string, Provider>();
  readonly #locks = new Map<string, Mutex>();
  readonly #timers = new Map<string, number>();
  /** Token expiry per platform, for health and metrics without unsealing. */
  readonly expiries = new Map<string, number>();
  readonly counters: Counters = { refreshes: new Map(), failures: new Map() };
  #stopped = false;
  /** Refreshes across daemons: this one's lease owner id and callbacks. */
  readonly #shared: SharedRefresh;

  constructor(
    readonly vault: Vault,
    readonly config: PlatformAuthConfig,
    readonly log: Logger,
    readonly clock: Clock,
    readonly alerts: Alerts,
    readonly keySource: string,
  ) {
    this.#shared = {
      vault,
      owner: crypto.randomUUID(),
      ttlMs: leaseTtlMs(config),
      log,
      stopped: () => this.#stopped,
      require: (platform) => this.require(platform),
      checkRefreshable: (record) => this.#checkRefreshable(record),
      refresh: (record, tokens, trigger) =>
        this.#refreshLocked(record, tokens, trigger),
      adopt: (platform, tokens, trigger) =>
        this.#adopt(platform, tokens, trigger),
    };
  }

  /** Start phase: check every platform's token and schedule its refresh. */
  async load(): Promise<void> {
    for (const record of await this.vault.platforms()) {
      const tokens = record.grant === "api_key"
        ? undefined
        : await this.vault.token(record.name);
      if (tokens?.expires_at !== undefined) {
        this.expiries.set(record.name, tokens.expires_at);
      }
      if (record.status === "pending") {
        // A device or browser flow does not survive a restart.
        await this.vault.putPlatform({
          ...record,
          status: tokens ? "active" : "not_authenticated",
          status_reason: "the authorization in progress was lost at restart",
          updated_at: this.clock.now(),
        });
      }
      if (retrying(record) || record.status === "pending") {
        this.schedule(record.name, tokens);
      }
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const handle of this.#timers.values()) this.clock.cancel(handle);
    this.#timers.clear();
    // Let running refreshes save what they got, for a few seconds at most.
    let timer: number | undefined;
    await Promise.race([
      Promise.all(
        [...this.#locks.values()].map((lock) =>
          lock.run(() => Promise.resolve())
        ),
      ),
      new Promise((resolve) => timer = Number(setTimeout(resolve, 5_000))),
    ]);
    clearTimeout(timer);
    await this.alerts.settle();
  }

  audit(
    platform: string,
    operation: Operation,
    outcome: string,
    extra: Record<string, unknown> = {},
  ): void {
    const expires = this.expiries.get(platform);
    this.log.info("token_operation", {
      platform,
      operation,
      outcome,
      ...(expires === undefined
        ? {}
        : { expires_at: new Date(expires).toISOString() }),
      ...extra,
    });
  }

  count(kind: "refreshes" | "failures", labels: string): void {
    const map = this.counters[kind];
    map.set(labels, (map.get(labels) ?? 0) + 1);
  }

  lock(platform: string): Mutex {
    let lock = this.#locks.get(platform);
    if (!lock) {
      lock = new Mutex();
      this.#locks.set(platform, lock);
    }
    return lock;
  }

  async require(platform: string): Promise<PlatformRecord> {
    const record = await this.vault.platform(platform);
    if (!record) {
      const known = (await this.vault.platforms()).map((each) => each.name);
      throw new ToolError(
        `No platform "${platform}"; configured: ${
          known.length ? known.join(", ") : "none"
        } (add one with add_platform)`,
      );
    }
    return record;
  }

  /** The platform's authorization server, discovered once and kept. */
  async provider(record: PlatformRecord): Promise<Provider> {
    const known = this.#providers.get(record.name);
    if (known) return known;
    const secret = record.sealed.client_secret === undefined
      ? undefined
      : await this.vault.unseal(
        record.name,
        "client_secret",
        record.sealed.client_secret,
      );
    try {
      const provider = await resolveProvider(
        record.settings,
        secret,
        this.config.http_timeout_ms,
      );
      this.#providers.set(record.name, provider);
      return provider;
    } catch (error) {
      throw new ToolError(
        `Cannot reach the authorization server of "${record.name}": ${
          messageOf(error)
        }`,
      );
    }
  }

  /** Arms the refresh timer from the stored token (after a platform was replaced). */
  async reschedule(platform: string): Promise<void> {
    const record = await this.vault.platform(platform);
    if (record?.status !== "active" || record.grant === "api_key") return;
    const tokens = await this.vault.token(platform);
    if (tokens?.expires_at !== undefined) {
      this.expiries.set(platform, tokens.expires_at);
    }
    this.schedule(platform, tokens);
  }

  forget(platform: string): void {
    this.#providers.delete(platform);
    this.expiries.delete(platform);
    const handle = this.#timers.get(platform);
    if (handle !== undefined) this.clock.cancel(handle);
    this.#timers.delete(platform);
  }

  async setStatus(
    record: PlatformRecord,
    status: AuthStatus,
    reason?: string,
    unreachableSince?: number,
  ): Promise<PlatformRecord> {
    const next: PlatformRecord = {
      ...record,
      status,
      status_reason: reason,
      unreachable_since: unreachableSince,
      updated_at: this.clock.now(),
    };
    await this.vault.putPlatform(next);
    return next;
  }

  /** Saves a token response (keeping the old refresh token unless rotated), marks active, schedules. */
  async saveTokens(
    record: PlatformRecord,
    response: TokenEndpointResponse,
    previous?: TokenSet,
  ): Promise<TokenSet> {
    const now = this.clock.now();
    const tokens: TokenSet = {
      access_token: response.access_token,
      refresh_token: response.refresh_token ?? previous?.refresh_token,
      token_type: response.token_type ?? "Bearer",
      scope: response.scope ?? previous?.scope,
      expires_at: typeof response.expires_in === "number"
        ? now + response.expires_in * 1000
        : undefined,
      obtained_at: now,
    };
    await this.vault.putToken(
      {
        ...record,
        status: "active",
        status_reason: undefined,
        unreachable_since: undefined,
        updated_at: now,
      },
      tokens,
    );
    if (tokens.expires_at === undefined) this.expiries.delete(record.name);
    else this.expiries.set(record.name, tokens.expires_at);
    this.schedule(record.name, tokens);
    this.alerts.clear(
      record.name,
      record.status === "auth_required" || record.status === "expired",
    );
    return tokens;
  }

  /** Wakes up `refresh_margin_s` before expiry to refresh. */
  schedule(platform: string, tokens: TokenSet | undefined): void {
    const previous = this.#timers.get(platform);
    if (previous !== undefined) this.clock.cancel(previous);
    this.#timers.delete(platform);
    if (this.#stopped || tokens?.expires_at === undefined) return;
    const due = tokens.expires_at - this.config.refresh_margin_s * 1000 -
      this.clock.now();
    this.#arm(platform, due);
  }

  #arm(platform: string, ms: number): void {
    const handle = this.clock.schedule(() => {
      this.#timers.delete(platform);
      this.#wake(platform).catch((error) => {
        this.log.warn("scheduled_refresh_failed", {
          platform,
          error: messageOf(error),
        });
        this.#retryLater(platform);
      });
    }, ms);
    this.#timers.set(platform, handle);
  }

  /** The refresh timer: refreshes, or marks a token nothing can renew expired at its expiry. */
  async #wake(platform: string): Promise<void> {
    const record = await this.vault.platform(platform);
    if (record === undefined || this.#stopped) return;
    const tokens = await this.vault.token(platform);
    if (tokens?.expires_at !== undefined && !renewable(record, tokens)) {
      const wait = tokens.expires_at - this.clock.now();
      // Noticed at the expiry itself, not only when someone asks for the token.
      if (wait > 0) this.#arm(platform, wait);
      else await this.#markExpired(record, tokens.expires_at);
      return;
    }
    const current = await this.refresh(platform, "scheduled");
    // Woken early (long delays are capped) or raced: arm again.
    if (!this.#timers.has(platform)) this.schedule(platform, current);
  }

  async #markExpired(record: PlatformRecord, expiresAt: number): Promise<void> {
    if (record.status !== "active") return;
    const at = new Date(expiresAt).toISOString();
    const reason =
      `the access token expired at ${at} and the provider issued no refresh token; call authenticate`;
    await this.setStatus(record, "expired", reason);
    this.audit(record.name, "refresh", "expired");
    this.alerts.raise(record.name, "expired", { reason, expired_at: at });
  }

  #retryDelayMs(): number {
    return Math.max(
      1000,
      this.config.retry_backoff_ms * 2 ** (this.config.refresh_retries + 1),
    );
  }

  /** After a refresh that failed on the network, try again later unless the platform needs a person. */
  #retryLater(platform: string): void {
    if (this.#stopped || this.#timers.has(platform)) return;
    // Wake at the expiry if it comes first: a provider still down then makes the platform auth_required.
    const expires = this.expiries.get(platform);
    const untilExpiry = expires === undefined
      ? Infinity
      : expires - this.clock.now();
    const delay = untilExpiry > 0
      ? Math.min(this.#retryDelayMs(), untilExpiry)
      : this.#retryDelayMs();
    const handle = this.clock.schedule(() => {
      this.#timers.delete(platform);
      this.vault.platform(platform).then(async (record) => {
        if (record === undefined || !retrying(record)) return;
        this.schedule(platform, await this.vault.token(platform));
      }).catch((error) =>
        this.log.warn("scheduled_refresh_failed", {
          platform,
          error: messageOf(error),
        })
      );
    }, delay);
    this.#timers.set(platform, handle);
  }

  /** A valid access token: waits for a refresh in progress, refreshes one about to expire. */
  async token(platform: string): Promise<TokenSet> {
    return await this.lock(platform).run(async () => {
      const record = await this.require(platform);
      if (
        record.status === "auth_required" &&
        record.unreachable_since === undefined
      ) {
        throw new ToolError(
          `Platform "${platform}" needs authentication again (${
            record.status_reason ?? "its refresh was rejected"
          }); call authenticate`,
        );
      }
      const { tokens, version } = await this.vault.tokenEntry(platform);
      if (!tokens) {
        throw new ToolError(
          `Platform "${platform}" has no token yet (status ${record.status}); call authenticate`,
        );
      }
      if (!this.#due(tokens)) return tokens;
      if (
        !renewable(record, tokens) && tokens.expires_at !== undefined &&
        tokens.expires_at > this.clock.now()
      ) {
        // Nothing can renew it; it still works until it expires.
        return tokens;
      }
      return await refreshShared(this.#shared, platform, version, "expiring");
    });
  }

  /** Refreshes now, whatever the expiry (refresh_token, the scheduler). */
  async refresh(
    platform: string,
    trigger: "on_demand" | "scheduled",
  ): Promise<TokenSet> {
    return await this.lock(platform).run(async () => {
      this.#checkRefreshable(await this.require(platform));
      const { tokens, version } = await this.vault.tokenEntry(platform);
      if (trigger === "scheduled" && tokens && !this.#due(tokens)) {
        // Someone refreshed while this timer waited for the lock.
        return tokens;
      }
      return await refreshShared(this.#shared, platform, version, trigger);
    });
  }

  #checkRefreshable(record: PlatformRecord): void {
    if (
      record.status === "auth_required" &&
      record.grant !== "client_credentials" &&
      record.unreachable_since === undefined
    ) {
      // The refresh token was refused once; only a person can fix that.
      throw new ToolError(
        `Platform "${record.name}" needs authentication again (${
          record.status_reason ?? "its refresh was rejected"
        }); call authenticate`,
      );
    }
  }

  /** Tokens another daemon refreshed: known expiry, timer re-armed. */
  #adopt(platform: string, tokens: TokenSet, trigger: string): void {
    if (tokens.expires_at === undefined) this.expiries.delete(platform);
    else this.expiries.set(platform, tokens.expires_at);
    this.schedule(platform, tokens);
    this.alerts.clear(platform, false);
    this.audit(platform, "refresh", "shared", { trigger });
  }

  #due(tokens: TokenSet): boolean {
    return tokens.expires_at !== undefined &&
      tokens.expires_at - this.config.refresh_margin_s * 1000 <=
        this.clock.now();
  }

  async #refreshLocked(
    record: PlatformRecord,
    tokens: TokenSet | undefined,
    trigger: string,
  ): Promise<TokenSet> {
    const platform = record.name;
    if (record.grant === "api_key") {
      throw new ToolError(
        `Platform "${platform}" uses an API key; there is nothing to refresh`,
      );
    }
    const provider = await this.provider(record);
    const canReissue = record.grant === "client_credentials";
    if (!canReissue && tokens?.refresh_token === undefined) {
      const expires = tokens?.expires_at;
      if (expires !== undefined && expires <= this.clock.now()) {
        await this.#markExpired(record, expires);
      }
      this.audit(platform, "refresh", "no_refresh_token", { trigger });
      throw new ToolError(
        `Platform "${platform}" has no refresh token; call authenticate again`,
      );
    }
    for (let attempt = 0;; attempt++) {
      try {
        const response = canReissue
          ? await clientCredentialsGrant(provider, record.settings.scopes ?? [])
          : await refreshGrant(provider, tokens?.refresh_token ?? "");
        const fresh = await this.saveTokens(record, response, tokens);
        this.count("refreshes", `${platform}\u0000ok`);
        this.audit(platform, "refresh", "ok", {
          trigger,
          rotated: response.refresh_token !== undefined &&
            response.refresh_token !== tokens?.refresh_token,
        });
        return fresh;
      } catch (error) {
        if (error instanceof GrantRejected) {
          this.count("refreshes", `${platform}\u0000rejected`);
          this.count("failures", `${platform}\u0000${error.error}`);
          await this.setStatus(
            record,
            "auth_required",
            `refresh rejected: ${error.message}`,
          );
          this.audit(platform, "refresh", "rejected", {
            trigger,
            error: error.error,
          });
          this.alerts.raise(platform, "auth_required", {
            reason: `refresh rejected: ${error.message}`,
          });
          throw new ToolError(
            `The provider rejected the refresh of "${platform}" (${error.message}); ` +
              `the platform is now auth_required: call authenticate`,
          );
        }
        if (!(error instanceof ProviderUnavailable)) throw error;
        this.count("failures", `${platform}\u0000unavailable`);
        this.audit(platform, "refresh", "retry", {
          trigger,
          attempt: attempt + 1,
          error: error.message,
        });
        if (attempt >= this.config.refresh_retries || this.#stopped) {
          this.count("refreshes", `${platform}\u0000failed`);
          throw await this.#unreachable(
            record,
            tokens,
            `${error.message} (tried ${attempt + 1} times)`,
          );
        }
        await sleep(this.clock, this.config.retry_backoff_ms * 2 ** attempt);
      }
    }
  }

  /**
   * A refresh that failed on the network after its retries: an alert, and
   * `auth_required` once the access token has expired (retried by itself
   * meanwhile). Returns the error for the caller.
   */
  async #unreachable(
    record: PlatformRecord,
    tokens: TokenSet | undefined,
    cause: string,
  ): Promise<ToolError> {
    const platform = record.name;
    const now = this.clock.now();
    const every = `retried every ${Math.round(this.#retryDelayMs() / 1000)} s`;
    const expires = tokens?.expires_at;
    if (tokens !== undefined && (expires === undefined || expires > now)) {
      const until = expires === undefined
        ? "does not expire"
        : `still works until ${new Date(expires).toISOString()}`;
      this.alerts.raise(platform, "refresh_failed", {
        reason: `refresh failed: ${cause}; the access token ${until}`,
      });
      return new ToolError(
        `Cannot refresh "${platform}": ${cause}; its access token ${until}, and the refresh is ${every}`,
      );
    }
    const reason =
      `refresh failed and the access token has expired: ${cause}; ${every} ` +
      "until the provider answers (check the network and the provider), or call authenticate";
    await this.setStatus(
      record,
      "auth_required",
      reason,
      record.unreachable_since ?? now,
    );
    this.alerts.raise(platform, "auth_required", { reason });
    return new ToolError(
      `Cannot refresh "${platform}": ${cause}, and its access token has expired; ` +
        `the platform is auth_required until the provider answers again (${every}) or you call authenticate`,
    );
  }
}

/** Whether anything can renew the token: a refresh token, or client credentials. */
function renewable(record: PlatformRecord, tokens: TokenSet): boolean {
  return record.grant === "client_credentials" ||
    tokens.refresh_token !== undefined;
}

/** Platforms whose refresh this daemon keeps trying: working, or only out of the provider's reach. */
function retrying(record: PlatformRecord): boolean {
  return record.status === "active" || record.unreachable_since !== undefined;
}
