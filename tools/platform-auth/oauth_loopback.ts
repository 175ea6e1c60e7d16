// A loopback redirect receiver (RFC 8252 §7.3) for OAuth flows in a process
// without an HTTP listener (stdio): 127.0.0.1 on an ephemeral port, path
// /oauth/callback, answering the browser with a short text page.

export interface CallbackOutcome {
  ok: boolean;
  message: string;
}

export interface LoopbackReceiver {
  /** `http://127.0.0.1:<port>/oauth/callback` */
  readonly url: string;
  close(): Promise<void>;
}

export function startLoopbackReceiver(
  complete: (params: URLSearchParams) => Promise<CallbackOutcome>,
): LoopbackReceiver {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const url = new URL(request.url);
      if (request.method !== "GET" || url.pathname !== "/oauth/callback") {
        return new Response("Not found\n", { status: 404 });
      }
      const outcome = await complete(url.searchParams);
      return new Response(`${outcome.message}\n`, {
        status: outcome.ok ? 200 : 400,
        headers: {
          "content-type": "text/plain; charset=utf-8",
          "cache-control": "no-store",
          "referrer-policy": "no-referrer",
        },
      });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/oauth/callback`,
    close: () => server.shutdown(),
  };
}
