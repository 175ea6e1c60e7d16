// PostgreSQL URLs as logs and errors may show them (no password), without
// loading the driver: every command may describe a store it does not open.

import { publicUrl } from "../log.ts";

/** Checks a PostgreSQL URL; returns it as logs and errors may show it (no password, query or fragment). */
export function checkPgUrl(url: string): string {
  const parsed = URL.parse(url);
  if (parsed === null) {
    throw new Error(
      "Invalid PostgreSQL URL: expected postgres://user@host:port/database",
    );
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") {
    throw new Error(
      `Invalid PostgreSQL URL: the scheme must be postgres:// (got ${parsed.protocol}//)`,
    );
  }
  return publicUrl(url);
}

/** The password inside a URL, if any (to scrub it from logs). */
export function passwordIn(url: string): string {
  try {
    return decodeURIComponent(new URL(url).password);
  } catch {
    return "";
  }
}

/** `text` with every occurrence of `secret` replaced. */
export function redactSecret(text: string, secret: string): string {
  return secret ? text.split(secret).join("[redacted]") : text;
}
