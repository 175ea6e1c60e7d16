// Where the credential store keeps what (vault.ts), apart so `serve`'s
// preflight can see what is stored without loading the vault's schemas.

import type { Store } from "../../platform/store/mod.ts";

/** The store's own record: its version, creation time and sealed canary. */
export const META = ["meta"];
/** One record per platform, under its name. */
export const PLATFORMS = ["platforms"];

/** What `store` holds, read only: no credential store, one without platforms, or platforms. */
export async function vaultContents(
  store: Store,
): Promise<"none" | "empty" | "platforms"> {
  if (await store.get(META) === null) return "none";
  const page = await store.list(PLATFORMS, { limit: 1 });
  return page.entries.length > 0 ? "platforms" : "empty";
}
