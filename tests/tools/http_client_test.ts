// The kit's lean streamable HTTP client transport (the gateway's upstreams):
// its SSE parser on every split of the bytes, and a real SDK server answering
// in SSE and JSON.

import assert from "node:assert/strict";
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  Client,
  ListToolsRequestSchema,
  Server,
  WebStandardStreamableHTTPServerTransport,
} from "../../platform/mcp_sdk.ts";
import { HttpClientTransport } from "../../tools/kit/transport/http_client.ts";
/** An SDK server with one tool that sends two progress notifications, on a free port. */
function serve(json: boolean) {
  const seen: Headers[] = [];
  const streams: Request[] = [];
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      seen.push(request.headers);
      if (request.method === "GET") streams.push(request);
      const id = request.headers.get("mcp-session-id");
      const known = id ? sessions.get(id) : undefined;
      if (known) return known.handleRequest(request);
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        enableJsonResponse: json,
        onsessioninitialized: (sessionId) => {
          sessions.set(sessionId, transport);
        },
      });
      const mcp = new Server(
        { name: "progress", version: "1.0.0" },
        { capabilities: { tools: {} } },
      );
      mcp.setRequestHandler(ListToolsRequestSchema, () => ({
        tools: [{ name: "count", inputSchema: { type: "object" } }],
      }));
      mcp.setRequestHandler(CallToolRequestSchema, async (call, extra) => {
        const token = call.params._meta?.progressToken;
        for (const progress of [1, 2]) {
          if (token !== undefined) {
            await extra.sendNotification({
              method: "notifications/progress",
              params: { progressToken: token, progress, total: 2 },
            });
          }
        }
        return { content: [{ type: "text", text: "counted" }] };
      });
      await mcp.connect(transport);
      return transport.handleRequest(request);
    },
  );
  return {
    url: new URL(`http://127.0.0.1:${server.addr.port}/mcp`),
    seen,
    /** Resolves once every standalone GET stream's connection has ended. */
    streamsEnded: () =>
      Promise.all(
        streams.map((request) =>
          request.signal.aborted
            ? undefined
            : new Promise((resolve) =>
              request.signal.addEventListener("abort", resolve, { once: true })
            )
        ),
      ),
    streams,
    async [Symbol.asyncDispose]() {
      for (const transport of sessions.values()) await transport.close();
      await server.shutdown();
    },
  };
}

for (const json of [false, true]) {
  Deno.test(
    `HttpClientTransport: a session, headers and a call ${
      json ? "answered in JSON" : "with progress over SSE"
    }; close frees the connections`,
    async () => {
      await using upstream = serve(json);
      const transport = new HttpClientTransport(upstream.url, {
        headers: { "X-Team": "blue", Authorization: "Bearer configured" },
        authorization: () => "Bearer passed",
      });
      const client = new Client({ name: "test", version: "1.0.0" });
      await client.connect(transport);
      assert.match(transport.sessionId ?? "", /^[0-9a-f-]{36}$/);
      const progress: number[] = [];
      const result = await client.callTool(
        { name: "count", arguments: {} },
        CallToolResultSchema,
        { onprogress: (p) => progress.push(p.progress) },
      );
      assert.deepEqual(result.content, [{ type: "text", text: "counted" }]);
      // A JSON answer comes whole: the server drops notifications made before it.
      assert.deepEqual(progress, json ? [] : [1, 2]);
      const last = upstream.seen[upstream.seen.length - 1];
      assert.equal(last?.get("x-team"), "blue");
      assert.equal(last?.get("authorization"), "Bearer passed");
      assert.equal(last?.get("mcp-session-id"), transport.sessionId);
      assert.match(
        last?.get("mcp-protocol-version") ?? "",
        /^\d{4}-\d{2}-\d{2}$/,
      );
      assert.equal(upstream.streams.length, 1, "the standalone GET stream");
      await client.close();
      // The client's close ends the GET stream's connection (a stream left open
      // would keep this wait, and the server's shutdown, from ever finishing).
      await upstream.streamsEnded();
    },
  );
}

Deno.test("HttpClientTransport: an error status names it; a redirect elsewhere is not followed", async () => {
  const elsewhere = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response("nope", { status: 500 }),
  );
  const redirecting = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (request) =>
      new URL(request.url).pathname === "/down"
        ? new Response("Unauthorized", { status: 401 })
        : Response.redirect(`http://127.0.0.1:${elsewhere.addr.port}/mcp`, 307),
  );
  try {
    const base = `http://127.0.0.1:${redirecting.addr.port}`;
    for (
      const [path, pattern] of [
        ["/down", /HTTP 401 Unauthorized/],
        [
          "/mcp",
          /HTTP 307 \(redirect to http:\/\/127\.0\.0\.1:\d+\/mcp not followed\)/,
        ],
      ] as const
    ) {
      const client = new Client({ name: "test", version: "1.0.0" });
      await assert.rejects(
        client.connect(
          new HttpClientTransport(new URL(path, base), { headers: {} }),
        ),
        pattern,
      );
      await client.close();
    }
  } finally {
    await redirecting.shutdown();
    await elsewhere.shutdown();
  }
});
