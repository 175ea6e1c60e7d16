// The paths servers declare for browsers (ServerSpec.callbacks: platform-auth's
// /oauth/callback, where providers send the person back, and its secret
// page). The query, or the page's posted form, goes to the running server
// that declared the path; the person sees a short page saying what happened
// (tools/kit/callback_page.ts).

import { Hono } from "hono";
import { errorResponse } from "../platform/http_errors.ts";
import {
  browserRequest,
  callbackResponse,
} from "../tools/kit/callback_page.ts";
import type { HostedServer } from "../tools/kit/host.ts";

/** Every callback path the servers of `hosts` declare, once each. */
export function callbackPaths(hosts: readonly HostedServer[]): string[] {
  return [
    ...new Set(hosts.flatMap((host) => Object.keys(host.spec.callbacks ?? {}))),
  ];
}

/** The callback paths whose page posts a form back (CallbackDef.form). */
export function formPaths(hosts: readonly HostedServer[]): string[] {
  return [
    ...new Set(
      hosts.flatMap((host) =>
        Object.entries(host.spec.callbacks ?? {}).filter(([, def]) => def.form)
          .map(([path]) => path)
      ),
    ),
  ];
}

/**
 * GET `path` (mount the app there), and POST where the server's definition
 * takes its page's form: handled by the first running server of `hosts`
 * (read at each request) that declares it; 404 naming the servers that
 * declare it when none of them runs.
 */
export function callbackRoute(
  hosts: readonly HostedServer[],
  path: string,
): Hono {
  const app = new Hono();
  app.on(["GET", "POST"], "/", async (c) => {
    // A HEAD (a link checker, a preview) must not use up a one-time state or page.
    if (c.req.method === "HEAD") {
      return new Response(null, { headers: { "cache-control": "no-store" } });
    }
    const running = hosts.map((host) => ({
      host,
      answer: host.callback(path),
    })).find((each) => each.answer !== undefined);
    if (running?.answer === undefined) {
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
    if (
      c.req.method === "POST" && running.host.spec.callbacks?.[path]?.form !==
        true
    ) {
      return errorResponse(405, `${path} takes GET only`);
    }
    const read = await browserRequest(c.req.raw);
    if (read instanceof Response) return read;
    return callbackResponse(await running.answer(read.params, read.browser));
  });
  return app;
}
