// Getting the first tokens: the browser flow (PKCE S256, a one-time state
// bound to the platform that expires), the device flow (RFC 8628) for
// headless machines, client credentials, and api_key probes.

import { messageOf } from "../../platform/errors.ts";
import type { JsonValue } from "../../platform/store/mod.ts";
import { ToolError } from "../kit/mod.ts";
import { openBrowser } from "./desktop_browser.ts";
import {
  authorizationUrl,
  clientCredentialsGrant,
  exchangeCode,
  GrantRejected,
  oauthLibrary,
  pollDeviceCode,
  ProviderUnavailable,
  startDeviceAuthorization,
} from "./provider.ts";
import type { PlatformAuth } from "./service.ts";
import type { PlatformRecord } from "./vault.ts";

interface PendingAuthorization {
  platform: string;
  codeVerifier: string;
  redirectUri: string;
  expiresAt: number;
  /** How the flow ended, for a call that waits for the person (URL elicitation). */
  ended: PromiseWithResolvers<FlowEnd>;
}

/** A browser flow's end: the tokens' view, or why it failed. */
export type FlowEnd =
  | { ok: true; result: { [key: string]: JsonValue } }
  | { ok: false; message: string };

/** A browser flow just started: what the person must open, and its end. */
export interface StartedBrowserFlow {
  result: { [key: string]: JsonValue };
  authorizationUrl: string;
  state: string;
  expiresAt: number;
  ended: Promise<FlowEnd>;
}

/** What the person a redirect brought back is told. */
export interface CallbackOutcome {
  ok: boolean;
  message: string;
}

/** Refuses a method that does not fit the platform's grant. */
export function checkMethod(
  record: PlatformRecord,
  method: "oauth" | "api_key",
): void {
  if ((method === "api_key") === (record.grant === "api_key")) return;
  throw new ToolError(
    `Platform "${record.name}" is ${
      record.grant === "api_key"
        ? "an api_key platform: use method api_key"
        : `an OAuth platform (${record.grant}): use method oauth`
    }`,
  );
}

export class Authorizations {
  /** state → flow; in memory only: a flow does not outlive the process. */
  readonly #pending = new Map<string, PendingAuthorization>();
  readonly #devices = new Map<string, number>();

  constructor(
    private readonly auth: PlatformAuth,
    private readonly redirectUri: () => string | undefined,
    /** The stdio loopback listener's redirect URI, started on first use. */
    private readonly loopbackRedirect: () => string,
  ) {}

  get pendingCount(): number {
    return this.#pending.size;
  }

  stop(): void {
    for (const handle of this.#devices.values()) this.auth.clock.cancel(handle);
    this.#devices.clear();
    for (const pending of this.#pending.values()) {
      pending.ended.resolve({ ok: false, message: "the server stopped" });
    }
    this.#pending.clear();
  }

  /** Drops a browser flow nobody will finish (the person declined its page). */
  abandon(state: string): void {
    const pending = this.#pending.get(state);
    this.#pending.delete(state);
    pending?.ended.resolve({ ok: false, message: "abandoned" });
  }

  /** What the person redirected to a callback is told: completion or the reason it failed. */
  async answer(
    params: URLSearchParams,
  ): Promise<CallbackOutcome & { platform?: string }> {
    try {
      const result = await this.complete(params);
      return {
        ok: true,
        platform: String(result.platform),
        message:
          `Platform "${result.platform}" is connected. You can close this window.`,
      };
    } catch (error) {
      return { ok: false, message: messageOf(error) };
    }
  }

  /** The daemon's callback, else the configured one, else a loopback receiver of our own (stdio). */
  #redirectUri(record: PlatformRecord): string {
    const configured = record.settings.redirect_uri ?? this.redirectUri();
    return configured ?? this.loopbackRedirect();
  }

  /** Starts the platform's OAuth grant; returns what the person must do, if anything. */
  async start(record: PlatformRecord): Promise<{ [key: string]: JsonValue }> {
    if (record.grant === "client_credentials") {
      return await this.#clientCredentials(record);
    }
    if (record.grant === "device_code") return await this.#startDevice(record);
    return (await this.startBrowser(record, { open: true })).result;
  }

  /** Starts an authorization_code flow: PKCE, a one-time state that expires. */
  async startBrowser(
    record: PlatformRecord,
    options: { open: boolean },
  ): Promise<StartedBrowserFlow> {
    const provider = await this.auth.provider(record);
    const oauth = await oauthLibrary();
    const redirectUri = this.#redirectUri(record);
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const now = this.auth.clock.now();
    this.#sweep(now);
    const expiresAt = now + this.auth.config.state_ttl_s * 1000;
    let url: URL;
    try {
      url = authorizationUrl(provider, {
        redirectUri,
        state,
        codeChallenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
        scopes: record.settings.scopes ?? [],
        extra: record.settings.authorize_params ?? {},
      });
    } catch (error) {
      throw new ToolError(
        `Cannot start authorization of "${record.name}": ${messageOf(error)}`,
      );
    }
    const ended = Promise.withResolvers<FlowEnd>();
    this.#pending.set(state, {
      platform: record.name,
      codeVerifier,
      redirectUri,
      expiresAt,
      ended,
    });
    const opened = options.open && record.settings.open_browser === true
      ? await openBrowser(url.href)
      : "not asked";
    this.auth.audit(record.name, "authorize", "started", {
      grant: "authorization_code",
    });
    return {
      result: {
        platform: record.name,
        method: "oauth",
        grant: "authorization_code",
        authorization_url: url.href,
        redirect_uri: redirectUri,
        expires_at: new Date(expiresAt).toISOString(),
        browser: opened,
        next:
          "Open authorization_url in a browser and consent; the provider redirects to redirect_uri, " +
          "which completes the flow (or pass the code and state to oauth_callback).",
      },
      authorizationUrl: url.href,
      state,
      expiresAt,
      ended: ended.promise,
    };
  }

  /**
   * Completes a browser flow from the redirect's query. The state is used up
   * whatever happens next, so a replay finds nothing.
   */
  async complete(
    params: URLSearchParams,
  ): Promise<{ [key: string]: JsonValue }> {
    const state = params.get("state");
    if (!state) throw new ToolError("state is missing from the callback");
    const pending = this.#pending.get(state);
    this.#pending.delete(state);
    if (!pending) {
      throw new ToolError(
        "Unknown or already used state: no authorization is waiting for it (call authenticate again)",
      );
    }
    try {
      const result = await this.#complete(state, pending, params);
      pending.ended.resolve({ ok: true, result });
      return result;
    } catch (error) {
      pending.ended.resolve({ ok: false, message: messageOf(error) });
      throw error;
    }
  }

  async #complete(
    state: string,
    pending: PendingAuthorization,
    params: URLSearchParams,
  ): Promise<{ [key: string]: JsonValue }> {
    const platform = pending.platform;
    if (pending.expiresAt <= this.auth.clock.now()) {
      this.auth.audit(platform, "exchange", "state_expired");
      throw new ToolError(
        `The authorization of "${platform}" expired (state older than ${this.auth.config.state_ttl_s}s); call authenticate again`,
      );
    }
    const error = params.get("error");
    if (error) {
      this.auth.audit(platform, "exchange", "denied", { error });
      throw new ToolError(
        `The provider refused the authorization of "${platform}": ${error}${
          params.get("error_description")
            ? ` (${params.get("error_description")})`
            : ""
        }`,
      );
    }
    if (!params.get("code")) {
      throw new ToolError("code is missing from the callback");
    }
    const record = await this.auth.require(platform);
    const provider = await this.auth.provider(record);
    // RFC 9207: a callback given to the tool has no iss; the state already binds the provider.
    if (
      !params.has("iss") &&
      provider.as.authorization_response_iss_parameter_supported
    ) {
      params.set("iss", provider.as.issuer);
    }
    return await this.auth.lock(platform).run(async () => {
      try {
        const response = await exchangeCode(provider, params, {
          state,
          redirectUri: pending.redirectUri,
          codeVerifier: pending.codeVerifier,
        });
        const tokens = await this.auth.saveTokens(record, response);
        this.auth.audit(platform, "exchange", "ok");
        return {
          platform,
          status: "active",
          token_type: tokens.token_type,
          scope: tokens.scope ?? null,
          expires_at: tokens.expires_at === undefined
            ? null
            : new Date(tokens.expires_at).toISOString(),
          refresh_token: tokens.refresh_token !== undefined,
        };
      } catch (error) {
        this.auth.audit(platform, "exchange", "failed", {
          error: messageOf(error),
        });
        throw new ToolError(
          `Cannot exchange the code of "${platform}": ${
            messageOf(error)
          }; nothing was stored`,
        );
      }
    });
  }

  async #clientCredentials(
    record: PlatformRecord,
  ): Promise<{ [key: string]: JsonValue }> {
    const provider = await this.auth.provider(record);
    return await this.auth.lock(record.name).run(async () => {
      try {
        const response = await clientCredentialsGrant(
          provider,
          record.settings.scopes ?? [],
        );
        const tokens = await this.auth.saveTokens(record, response);
        this.auth.audit(record.name, "client_credentials", "ok");
        return {
          platform: record.name,
          method: "oauth",
          grant: "client_credentials",
          status: "active",
          expires_at: tokens.expires_at === undefined
            ? null
            : new Date(tokens.expires_at).toISOString(),
        };
      } catch (error) {
        this.auth.audit(record.name, "client_credentials", "failed", {
          error: messageOf(error),
        });
        throw new ToolError(
          `Client credentials grant of "${record.name}" failed: ${
            messageOf(error)
          }`,
        );
      }
    });
  }

  async #startDevice(
    record: PlatformRecord,
  ): Promise<{ [key: string]: JsonValue }> {
    const provider = await this.auth.provider(record);
    let device;
    try {
      device = await startDeviceAuthorization(
        provider,
        record.settings.scopes ?? [],
      );
    } catch (error) {
      throw new ToolError(
        `Cannot start the device flow of "${record.name}": ${messageOf(error)}`,
      );
    }
    const current = await this.auth.setStatus(
      record,
      "pending",
      "waiting for the person to approve the device",
    );
    const expiresAt = this.auth.clock.now() + device.expires_in * 1000;
    const previous = this.#devices.get(record.name);
    if (previous !== undefined) this.auth.clock.cancel(previous);
    this.#pollDevice(
      current,
      device.device_code,
      (device.interval ?? 5) * 1000,
      expiresAt,
    );
    this.auth.audit(record.name, "device", "started");
    return {
      platform: record.name,
      method: "oauth",
      grant: "device_code",
      status: "pending",
      verification_uri: device.verification_uri,
      verification_uri_complete: device.verification_uri_complete ?? null,
      user_code: device.user_code,
      expires_at: new Date(expiresAt).toISOString(),
      next:
        "Open verification_uri on any device, enter user_code and approve; get_auth_status shows active once done.",
    };
  }

  #pollDevice(
    record: PlatformRecord,
    deviceCode: string,
    intervalMs: number,
    expiresAt: number,
  ): void {
    const handle = this.auth.clock.schedule(async () => {
      this.#devices.delete(record.name);
      const current = await this.auth.vault.platform(record.name);
      // Removed, replaced or re-authenticated meanwhile: this poll is over.
      if (
        current?.status !== "pending" || current.added_at !== record.added_at
      ) {
        return;
      }
      const now = this.auth.clock.now();
      if (now >= expiresAt) {
        await this.auth.setStatus(
          record,
          "not_authenticated",
          "the device code expired before approval",
        );
        this.auth.audit(record.name, "device", "expired");
        return;
      }
      try {
        const provider = await this.auth.provider(record);
        const result = await pollDeviceCode(provider, deviceCode);
        if (result === "pending" || result === "slow_down") {
          const next = result === "slow_down" ? intervalMs + 5000 : intervalMs;
          this.#pollDevice(record, deviceCode, next, expiresAt);
          return;
        }
        await this.auth.lock(record.name).run(() =>
          this.auth.saveTokens(record, result)
        );
        this.auth.audit(record.name, "device", "ok");
      } catch (error) {
        if (error instanceof ProviderUnavailable) {
          this.#pollDevice(record, deviceCode, intervalMs * 2, expiresAt);
          return;
        }
        const reason = error instanceof GrantRejected
          ? error.message
          : messageOf(error);
        await this.auth.setStatus(
          record,
          "not_authenticated",
          `device flow ended: ${reason}`,
        );
        this.auth.audit(record.name, "device", "failed", { error: reason });
      }
    }, intervalMs);
    this.#devices.set(record.name, handle);
  }

  #sweep(now: number): void {
    for (const [state, pending] of this.#pending) {
      if (pending.expiresAt > now) continue;
      this.#pending.delete(state);
      pending.ended.resolve({
        ok: false,
        message: `the authorization of "${pending.platform}" expired`,
      });
    }
  }
}
