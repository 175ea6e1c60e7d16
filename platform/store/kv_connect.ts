// Opens a remote Deno KV over KV Connect, for every part of the daemon that
// uses one (the memory server's hosted store, the gateway's coordination
// store).

/**
 * `Deno.openKv(url)` with its access token. Deno reads the token only from
 * the process environment (DENO_KV_ACCESS_TOKEN), so it is set there when
 * given and different; the caller has registered it with the log redactor.
 */
export async function openKvConnect(
  url: string,
  token: string | undefined,
): Promise<Deno.Kv> {
  if (token !== undefined && Deno.env.get("DENO_KV_ACCESS_TOKEN") !== token) {
    Deno.env.set("DENO_KV_ACCESS_TOKEN", token);
  }
  return await Deno.openKv(url);
}
