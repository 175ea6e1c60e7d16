// What `serve` knows about the credential store at start without loading
// this server (its OAuth flows, providers, tools): stored platforms make it
// start with the daemon (tokens to refresh before they expire, statuses for
// /health); a key that does not open the store is an `error` in /health
// from the first request; an empty or absent store waits for the first call
// (or the first browser at /oauth/callback).

import type { HostOptions, Preflight } from "../kit/host.ts";
import { messageOf } from "../../platform/errors.ts";
import { lazy } from "../../platform/lazy.ts";
import { PlatformAuthConfig } from "./config.ts";
import { vaultContents } from "./vault_layout.ts";

export async function preflight(options: HostOptions): Promise<Preflight> {
  const config = PlatformAuthConfig.parse(options.config);
  if (config.init_store) return { start: "init_store creates the store now" };
  const contents = await vaultContents(options.store);
  if (contents === "platforms") return { start: "platforms are stored" };
  if (contents === "none") return undefined;
  // Only a store to unseal loads the key and the vault's code.
  try {
    const [{ openSecrets }, { checkUnseals }] = await Promise.all([
      lazy<typeof import("../../platform/secrets.ts")>(
        "../../platform/secrets.ts",
        import.meta.url,
      ),
      lazy<typeof import("./vault.ts")>("./vault.ts", import.meta.url),
    ]);
    const secrets = await openSecrets({
      env: options.env ?? Deno.env.toObject(),
      dataDir: options.dataDir,
      keychain: config.keychain === "auto",
    });
    await checkUnseals(options.store, secrets.dataKey);
    return undefined;
  } catch (error) {
    return { error: messageOf(error) };
  }
}
