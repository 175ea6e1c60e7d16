// A bare HTTP relay on Deno for bench/gateway_bench.ts: every request to it is
// passed on to the upstream URL (argument 1) and the answer streamed back,
// bytes untouched. No MCP parsing at all: the floor for any proxy on Deno in
// front of an HTTP MCP server (one Deno.serve exchange and one fetch per call).
//
//   deno run -A bench/relay.ts http://127.0.0.1:PORT/mcp

const upstream = new URL(Deno.args[0] ?? "");

Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.error(`relay listening on port ${port}`),
}, (request) => {
  const headers = new Headers(request.headers);
  headers.delete("host");
  return fetch(upstream, {
    method: request.method,
    headers,
    body: request.body,
    signal: request.signal,
  });
});
