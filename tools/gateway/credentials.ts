// Credentials given to register_server (a bearer token and/or headers): checked,
// sealed with the daemon's secret key (AES-256-GCM, bound to the registration's
// name) before they reach the store, and opened again when it is loaded.
// Only whether an upstream has credentials is ever shown.

import { z } from "zod";
import { messageOf } from "../../platform/errors.ts";
import type { Logger } from "../../platform/log.ts";
import { decrypt, encrypt } from "../../platform/secrets.ts";
import { ToolError } from "../kit/mod.ts";

/** An HTTP field name (RFC 9110 token). */
const FIELD_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export const CredentialHeaders = z.record(
  z.string().regex(FIELD_NAME, "an HTTP header name (letters, digits, '-')"),
  z.string().min(1).max(8192).regex(
    /^[^\r\n\0]*$/,
    "a header value on one line",
  ),
);

/** Headers the MCP transport sets itself; a registration cannot replace them. */
const TRANSPORT_HEADERS = new Set([
  "accept",
  "content-type",
  "content-length",
  "host",
  "mcp-session-id",
  "mcp-protocol-version",
  "last-event-id",
]);

/** The headers sent to a registered upstream: `headers`, plus `Authorization: Bearer <token>`. */
export function credentialHeaders(
  token: string | undefined,
  headers: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  const merged: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const lower = name.toLowerCase();
    if (TRANSPORT_HEADERS.has(lower)) {
      throw new ToolError(
        `headers.${name}: set by the MCP transport itself; it cannot be given. Nothing was registered.`,
      );
    }
    if (lower === "authorization" && token !== undefined) {
      throw new ToolError(
        "Give either token or headers.Authorization, not both. Nothing was registered.",
      );
    }
    merged[name] = value;
  }
  if (token !== undefined) merged.Authorization = `Bearer ${token}`;
  return merged;
}

/** The AES-GCM associated data: a sealed value moved to another name does not open. */
function contextOf(name: string): string {
  return `gateway/registrations/${name}`;
}

export async function sealCredentials(
  key: CryptoKey,
  name: string,
  headers: Readonly<Record<string, string>>,
): Promise<string> {
  return await encrypt(key, JSON.stringify(headers), contextOf(name));
}

/** The headers of a sealed registration; throws when the secret key differs or the value is damaged. */
export async function openCredentials(
  key: CryptoKey,
  name: string,
  sealed: string,
): Promise<Record<string, string>> {
  const parsed = CredentialHeaders.safeParse(
    JSON.parse(await decrypt(key, sealed, contextOf(name))),
  );
  if (!parsed.success) throw new Error("the sealed credentials are damaged");
  return parsed.data;
}

/** Keeps every credential value out of the log lines (redacted if it ever appears). */
export function hideFromLogs(
  log: Logger,
  headers: Readonly<Record<string, string>>,
): void {
  for (const value of Object.values(headers)) {
    log.addSecret(value);
    const bearer = /^Bearer\s+(.+)$/i.exec(value)?.[1];
    if (bearer) log.addSecret(bearer);
  }
}

/**
 * The headers of a stored registration: none when it has no credentials, and
 * none (logged) when they cannot be opened here (another secret key): the
 * upstream then fails its checks and says so.
 */
export async function storedCredentials(
  registration: { name: string; credentials: string | null },
  options: { secretKey(): Promise<CryptoKey>; log: Logger },
): Promise<Record<string, string>> {
  if (registration.credentials === null) return {};
  try {
    return await openCredentials(
      await options.secretKey(),
      registration.name,
      registration.credentials,
    );
  } catch (error) {
    options.log.warn("registration_credentials_unreadable", {
      upstream: registration.name,
      error: messageOf(error),
    });
    return {};
  }
}
