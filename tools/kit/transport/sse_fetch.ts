// fetch for MCP's streamable HTTP client transport. An aborted fetch errors
// its body, but Deno 2.9 may keep the connection of an SSE response open
// (bench/README.md, idle memory: a closed client's standalone GET held the
// server's shutdown); cancelling the body itself closes it. JSON answers are
// read whole and need no relay.

/** `response`, with an SSE body that ends (and frees its connection) when `signal` aborts. */
function endsOnAbort(
  response: Response,
  signal: AbortSignal | undefined,
): Response {
  const body = response.body;
  const sse = response.headers.get("content-type")?.startsWith(
    "text/event-stream",
  );
  if (!body || !signal || !sse) return response;
  const relay = new TransformStream<Uint8Array, Uint8Array>();
  body.pipeTo(relay.writable, { signal }).catch(() => {});
  return new Response(relay.readable, response);
}

/** `fetch` whose SSE responses end when the request's signal aborts. */
export async function sseSafeFetch(
  input: string | URL,
  init?: RequestInit,
): Promise<Response> {
  return endsOnAbort(await fetch(input, init), init?.signal ?? undefined);
}
