// GET /icons/<server>.svg and /icons/<server>/<group>.svg: the servers' and
// tool groups' icons their listings name (tools/kit/icons.ts). Public like
// any image a client fetches without credentials; nothing secret in them.

import { Hono } from "hono";
import type { GuardVariables } from "../../platform/http_guards.ts";
import type { HostedServer } from "../../tools/kit/host.ts";
import { ICON_TYPE, iconFiles } from "../../tools/kit/icons.ts";

/** The icons' paths, which need no daemon token (routes/mod.ts). */
export function iconPaths(hosts: readonly HostedServer[]): string[] {
  return [...iconFiles(hosts.map((host) => host.spec)).keys()];
}

/** Mount at `/`: answers each path of `iconPaths` exactly. */
export function iconRoutes(
  hosts: readonly HostedServer[],
): Hono<{ Variables: GuardVariables }> {
  const app = new Hono<{ Variables: GuardVariables }>();
  for (const [path, svg] of iconFiles(hosts.map((host) => host.spec))) {
    app.get(path, (c) =>
      c.body(svg, 200, {
        "content-type": ICON_TYPE,
        "cache-control": "public, max-age=86400",
        "x-content-type-options": "nosniff",
        // Opened as a page, an SVG could run script: it may not.
        "content-security-policy":
          "default-src 'none'; style-src 'unsafe-inline'",
      }));
  }
  return app;
}
