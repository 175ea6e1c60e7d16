// PostgreSQL URLs as logs and errors may show them (no password).

import { StoreError } from "./store.ts";

/** A PostgreSQL URL without its password, for logs and errors. */
export function publicPgUrl(url: string): string {
  const parsed = URL.parse(url);
  if (
    parsed === null ||
    (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:")
  ) {
    throw new StoreError(
      "Invalid PostgreSQL URL: expected postgres://user@host:port/database",
    );
  }
  parsed.password = "";
  return parsed.toString();
}

/** The password in a URL, decoded; "" when none. */
export function passwordIn(url: string): string {
  try {
    return decodeURIComponent(new URL(url).password);
  } catch {
    return "";
  }
}
