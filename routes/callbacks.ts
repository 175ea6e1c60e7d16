// The GET paths servers declare for browser redirects (ServerSpec.callbacks:
// platform-auth's /oauth/callback, where providers send the person back).
// The query goes to the running server that declared the path; the person
// sees a short page saying what happened.

import { Hono } from "hono";
import { errorResponse } from "../platform/http_errors.ts";
import type { HostedServer } from "../tools/kit/host.ts";

/** Every callback path the servers of `hosts` declare, once each. */
export function callbackPaths(hosts: readonly HostedServer[]): string[] {
  return [
    ...new Set(hosts.flatMap((host) => Object.keys(host.spec.callbacks ?? {}))),
  ];
}

/**
 * GET `path` (mount the app there): handled by the first running server of
 * `hosts` (read at each request) that declares it; 404 naming the servers
 * that declare it when none of them runs.
 */
export function callbackRoute(
  hosts: readonly HostedServer[],
  path: string,
): Hono {
  const app = new Hono();
  app.get("/", async (c) => {
    const answer = hosts.map((host) => host.callback(path)).find((each) =>
      each !== undefined
    );
    if (answer === undefined) {
      const declaring = hosts.filter((host) =>
        Object.hasOwn(host.spec.callbacks ?? {}, path)
      ).map((host) => `${host.id}: ${host.phase.phase}`);
      return errorResponse(
        404,
        declaring.length > 0
          ? `No server that answers ${path} is running (${
            declaring.join(", ")
          })`
          : `No server here answers ${path}`,
      );
    }
    const outcome = await answer(new URL(c.req.url).searchParams);
    // Never cached, never sent on: the URL may hold a code.
    c.header("Cache-Control", "no-store");
    c.header("Referrer-Policy", "no-referrer");
    return c.html(page(outcome.title, outcome.message), outcome.ok ? 200 : 400);
  });
  return app;
}

function page(title: string, message: string): string {
  const escape = (text: string) =>
    text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
  return `<!doctype html><html><head><meta charset="utf-8"><title>${
    escape(title)
  }</title></head><body><h1>${escape(title)}</h1><p id="message">${
    escape(message)
  }</p></body></html>`;
}
