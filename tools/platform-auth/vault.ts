// The credential store: platform configs and tokens in the daemon's store,
// every secret sealed with AES-256-GCM (associated data = platform + field),
// so a value copied to another platform or field does not open.

import { decrypt, encrypt, SecretsError } from "../../platform/secrets.ts";
import type { JsonValue, Store } from "../../platform/store/mod.ts";
import { z } from "zod";
import { PlatformConfig } from "./config.ts";
import { META, PLATFORMS } from "./vault_layout.ts";

export const AUTH_STATUSES = [
  "not_authenticated",
  "pending",
  "active",
  "expired",
  "auth_required",
  "revoked",
] as const;
export type AuthStatus = typeof AUTH_STATUSES[number];

/** A platform as stored: its public settings, sealed secrets and status. */
const PlatformRecord = z.object({
  name: z.string(),
  grant: z.enum([
    "authorization_code",
    "device_code",
    "client_credentials",
    "api_key",
  ]),
  /** The config without client_secret and api_key. */
  settings: PlatformConfig,
  sealed: z.object({
    client_secret: z.string().optional(),
    api_key: z.string().optional(),
  }),
  status: z.enum(AUTH_STATUSES),
  status_reason: z.string().optional(),
  /** Set while `auth_required` comes from a provider out of reach: retried by itself, no person needed. */
  unreachable_since: z.number().optional(),
  added_at: z.number(),
  updated_at: z.number(),
});
export type PlatformRecord = z.output<typeof PlatformRecord>;

/** Token fields in the clear, held in memory only while used. */
export interface TokenSet {
  access_token: string;
  refresh_token?: string;
  token_type: string;
  scope?: string;
  /** Epoch ms; undefined when the provider gave no expiry. */
  expires_at?: number;
  obtained_at: number;
}

const CANARY = "platform-auth credential store";

export class StoreUnreadableError extends SecretsError {}

function context(platform: string, field: string): string {
  return `platform-auth\u0000${platform}\u0000${field}`;
}

/** Throws StoreUnreadableError unless `key` opens the store whose meta record is `meta`. */
async function unseal(key: CryptoKey, meta: JsonValue): Promise<void> {
  const canary = typeof meta === "object" && meta !== null &&
      !Array.isArray(meta) && typeof meta.canary === "string"
    ? meta.canary
    : "";
  try {
    if (await decrypt(key, canary, context("", "canary")) !== CANARY) {
      throw new Error("canary mismatch");
    }
  } catch {
    throw new StoreUnreadableError(
      "The credential store cannot be unsealed: the master key differs from the one it was " +
        "created with. Restore that key (AGENTD_SECRET_KEY, the key file or the keychain entry); " +
        "the store is left untouched.",
    );
  }
}

/** Throws StoreUnreadableError when `store` holds a credential store `key` does not open; writes nothing. */
export async function checkUnseals(
  store: Store,
  key: CryptoKey,
): Promise<void> {
  const meta = await store.get(META);
  if (meta !== null) await unseal(key, meta.value);
}

export class Vault {
  private constructor(
    private readonly store: Store,
    private readonly key: CryptoKey,
  ) {}

  /**
   * Opens the store with `key`. `init`: create it, refusing an existing one.
   * A store sealed under another key is refused, never reset.
   */
  static async open(
    store: Store,
    key: CryptoKey,
    options: { init: boolean; now: number },
  ): Promise<{ vault: Vault; created: boolean }> {
    const vault = new Vault(store, key);
    const meta = await store.get(META);
    if (meta !== null) {
      if (options.init) {
        throw new Error(
          "--init-store: a credential store already exists; it is kept as is. " +
            "Start without --init-store to use it (remove_platform deletes platforms one by one).",
        );
      }
      await unseal(key, meta.value);
      return { vault, created: false };
    }
    const result = await store.commit({
      checks: [{ key: META, version: null }],
      mutations: [{
        type: "set",
        key: META,
        value: {
          version: 1,
          created_at: options.now,
          canary: await encrypt(key, CANARY, context("", "canary")),
        },
      }],
    });
    if (!result.ok) {
      return await Vault.open(store, key, { ...options, init: false });
    }
    return { vault, created: true };
  }

  async platforms(): Promise<PlatformRecord[]> {
    const records: PlatformRecord[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.store.list(PLATFORMS, { cursor });
      for (const entry of page.entries) {
        const record = asPlatform(entry.value);
        if (record) records.push(record);
      }
      cursor = page.cursor ?? undefined;
    } while (cursor !== undefined);
    return records;
  }

  async platform(name: string): Promise<PlatformRecord | undefined> {
    const entry = await this.store.get([...PLATFORMS, name]);
    return entry ? asPlatform(entry.value) : undefined;
  }

  async seal(platform: string, field: string, value: string): Promise<string> {
    return await encrypt(this.key, value, context(platform, field));
  }

  async unseal(
    platform: string,
    field: string,
    sealed: string,
  ): Promise<string> {
    return await decrypt(this.key, sealed, context(platform, field));
  }

  async putPlatform(record: PlatformRecord): Promise<void> {
    await this.store.set([...PLATFORMS, record.name], toJson(record));
  }

  /** Removes a platform and its tokens in one commit. */
  async removePlatform(name: string): Promise<void> {
    await this.store.commit({
      mutations: [
        { type: "delete", key: [...PLATFORMS, name] },
        { type: "delete", key: ["tokens", name] },
        { type: "delete", key: ["refresh_leases", name] },
      ],
    });
  }

  async token(name: string): Promise<TokenSet | undefined> {
    return (await this.tokenEntry(name)).tokens;
  }

  /** The tokens with the stored version, so a change by another daemon shows. */
  async tokenEntry(
    name: string,
  ): Promise<{ tokens?: TokenSet; version: string | null }> {
    const entry = await this.store.get(["tokens", name]);
    if (!entry) return { version: null };
    return {
      tokens: await this.#unsealTokens(name, entry.value),
      version: entry.version,
    };
  }

  /**
   * Takes the platform's refresh lease for `owner` unless another owner holds
   * one that has not expired; a checked commit, so one taker wins.
   */
  async takeRefreshLease(
    name: string,
    owner: string,
    ttlMs: number,
  ): Promise<boolean> {
    const key = ["refresh_leases", name];
    const entry = await this.store.get(key);
    const held = leaseOf(entry?.value);
    if (held && held.owner !== owner && held.expires_at > Date.now()) {
      return false;
    }
    const result = await this.store.commit({
      checks: [{ key, version: entry?.version ?? null }],
      mutations: [{
        type: "set",
        key,
        value: { owner, expires_at: Date.now() + ttlMs },
      }],
    });
    return result.ok;
  }

  /** Gives the lease back if `owner` still holds it. */
  async releaseRefreshLease(name: string, owner: string): Promise<void> {
    const key = ["refresh_leases", name];
    const entry = await this.store.get(key);
    if (!entry || leaseOf(entry.value)?.owner !== owner) return;
    await this.store.commit({
      checks: [{ key, version: entry.version }],
      mutations: [{ type: "delete", key }],
    });
  }

  async #unsealTokens(
    name: string,
    value: JsonValue,
  ): Promise<TokenSet | undefined> {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return undefined;
    }
    const access = value.access_token;
    if (typeof access !== "string") return undefined;
    const refresh = value.refresh_token;
    return {
      access_token: await this.unseal(name, "access_token", access),
      refresh_token: typeof refresh === "string"
        ? await this.unseal(name, "refresh_token", refresh)
        : undefined,
      token_type: String(value.token_type ?? "Bearer"),
      scope: typeof value.scope === "string" ? value.scope : undefined,
      expires_at: typeof value.expires_at === "number"
        ? value.expires_at
        : undefined,
      obtained_at: Number(value.obtained_at ?? 0),
    };
  }

  /** Saves tokens and the platform's status together (the refresh token before anyone sees the access token). */
  async putToken(record: PlatformRecord, tokens: TokenSet): Promise<void> {
    const sealed: { [key: string]: JsonValue } = {
      access_token: await this.seal(
        record.name,
        "access_token",
        tokens.access_token,
      ),
      token_type: tokens.token_type,
      obtained_at: tokens.obtained_at,
    };
    if (tokens.refresh_token !== undefined) {
      sealed.refresh_token = await this.seal(
        record.name,
        "refresh_token",
        tokens.refresh_token,
      );
    }
    if (tokens.scope !== undefined) sealed.scope = tokens.scope;
    if (tokens.expires_at !== undefined) sealed.expires_at = tokens.expires_at;
    const result = await this.store.commit({
      mutations: [
        { type: "set", key: ["tokens", record.name], value: sealed },
        {
          type: "set",
          key: [...PLATFORMS, record.name],
          value: toJson(record),
        },
      ],
    });
    if (!result.ok) throw new Error(`Cannot save tokens of ${record.name}`);
  }

  async dropToken(record: PlatformRecord): Promise<void> {
    await this.store.commit({
      mutations: [
        { type: "delete", key: ["tokens", record.name] },
        {
          type: "set",
          key: [...PLATFORMS, record.name],
          value: toJson(record),
        },
      ],
    });
  }
}

function toJson(record: PlatformRecord): JsonValue {
  return JSON.parse(JSON.stringify(record));
}

function leaseOf(
  value: JsonValue | undefined,
): { owner: string; expires_at: number } | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return undefined;
  }
  const { owner, expires_at } = value;
  return typeof owner === "string" && typeof expires_at === "number"
    ? { owner, expires_at }
    : undefined;
}

function asPlatform(value: JsonValue): PlatformRecord | undefined {
  const parsed = PlatformRecord.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}
