// A loopback listener (RFC 8252 §7.3) for a process without an HTTP face
// (stdio): 127.0.0.1 on an ephemeral port, answering the server's browser
// paths (/oauth/callback, the secret and consent pages) with the same page
// the daemon's face gives (tools/kit/callback_page.ts).

import { browserRequest, callbackResponse } from "../kit/callback_page.ts";
import type { BrowserRequest, CallbackOutcome } from "../kit/mod.ts";
import { isLoopback } from "../../platform/hosts.ts";

/** One path's handler: GET (and, with `form`, POST of its page's form). */
export interface LoopbackPath {
  answer(
    params: URLSearchParams,
    browser: BrowserRequest,
  ): Promise<CallbackOutcome>;
  form?: boolean;
}

export interface LoopbackReceiver {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  close(): Promise<void>;
}

export function startLoopbackReceiver(
  paths: Readonly<Record<string, LoopbackPath>>,
): LoopbackReceiver {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const url = new URL(request.url);
      // Against DNS rebinding: only loopback names reach the pages.
      if (!isLoopback(url.hostname)) {
        await request.body?.cancel();
        return new Response("Host not allowed\n", { status: 403 });
      }
      const path = Object.hasOwn(paths, url.pathname)
        ? paths[url.pathname]
        : undefined;
      const allowed = request.method === "GET" ||
        (request.method === "POST" && path?.form === true);
      if (path === undefined || !allowed) {
        await request.body?.cancel();
        return new Response("Not found\n", { status: 404 });
      }
      const read = await browserRequest(request);
      if (read instanceof Response) return read;
      return callbackResponse(await path.answer(read.params, read.browser));
    },
  );
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    close: () => server.shutdown(),
  };
}
