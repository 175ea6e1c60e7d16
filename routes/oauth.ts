// GET /oauth/callback: where OAuth providers send the person back. The code
// and state go to the server that runs OAuth flows (platform-auth) through
// its runtime; the person sees a short page saying what happened.

import { Hono } from "hono";
import { errorResponse } from "../platform/http_errors.ts";
import type { HostedServer } from "../tools/kit/host.ts";

export const OAUTH_CALLBACK_PATH = "/oauth/callback";

function page(title: string, message: string): string {
  const escape = (text: string) =>
    text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
  return `<!doctype html><html><head><meta charset="utf-8"><title>${
    escape(title)
  }</title></head><body><h1>${escape(title)}</h1><p id="message">${
    escape(message)
  }</p></body></html>`;
}

/** Answers only when a running server handles callbacks; 404 otherwise. */
export function oauthRoutes(hosts: readonly HostedServer[]): Hono {
  const app = new Hono();
  app.get("/", async (c) => {
    const handler = hosts.map((host) => host.oauthCallback()).find((each) =>
      each !== undefined
    );
    if (handler === undefined) {
      return errorResponse(
        404,
        "No server here handles OAuth callbacks (is platform-auth running?)",
      );
    }
    const params = new URL(c.req.url).searchParams;
    const outcome = await handler(params);
    // Never cached, never sent on: the URL held a code.
    c.header("Cache-Control", "no-store");
    c.header("Referrer-Policy", "no-referrer");
    return c.html(
      page(
        outcome.ok ? "Connected" : "Authorization failed",
        outcome.message,
      ),
      outcome.ok ? 200 : 400,
    );
  });
  return app;
}
