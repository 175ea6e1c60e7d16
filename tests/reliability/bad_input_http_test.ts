// Property-based bad input on the wire: generated JSON-RPC messages and raw
// bodies POSTed to `serve`'s /mcp/<server> endpoints (every built server)
// and the gateway's /mcp, with and without a session: never a 5xx or a
// dropped connection; always a 4xx or a JSON-RPC error / isError result; the
// daemon keeps serving.

import assert from "node:assert/strict";
import fc from "fast-check";
import { api, INITIALIZE_REQUEST, spawnServe, tempDir } from "../helpers.ts";
import { nastyObject, nastyValue, sized } from "./bad_values.ts";

const ACCEPT = "application/json, text/event-stream";

const METHODS = [
  "initialize",
  "tools/list",
  "tools/call",
  "resources/list",
  "resources/read",
  "prompts/get",
  "completion/complete",
  "logging/setLevel",
  "ping",
  "notifications/initialized",
  "no/such/method",
];

const message = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      jsonrpc: fc.oneof(fc.constant("2.0"), nastyValue),
      id: fc.oneof(fc.integer(), fc.string({ maxLength: 10 }), nastyValue),
      method: fc.oneof(fc.constantFrom(...METHODS), nastyValue),
      params: nastyObject([
        "name",
        "arguments",
        "uri",
        "level",
        "protocolVersion",
        "capabilities",
        "clientInfo",
        "ref",
        "argument",
      ]),
    }, { requiredKeys: ["method"] }).map((body) => JSON.stringify(body)),
  },
  {
    weight: 1,
    arbitrary: fc.array(nastyValue, { maxLength: 3 }).map((body) =>
      JSON.stringify(body)
    ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom("", "{", "[]", "null", "[{}]", "\u0000"),
  },
);

Deno.test("bad input on the wire: generated JSON-RPC to every /mcp endpoint never gets a 5xx", async () => {
  await using dir = await tempDir();
  const daemon = await spawnServe(dir.path);
  try {
    const health = (await api(daemon, "GET", "/health")).json;
    const all = Object.entries(Object(Object(health).servers));
    assert.ok(all.length >= 5, JSON.stringify(all));
    // A server that cannot run here (desktop-control without a display)
    // answers 503 by design: "not available", naming its error.
    const servers = all.filter(([, server]) =>
      Object(server).phase === "running"
    ).map(([id]) => id);
    const endpoints = ["/mcp", ...servers.map((id) => `/mcp/${id}`)];
    // One live session per endpoint, so generated messages also reach the session path.
    const sessions = new Map<string, string>();
    for (const path of endpoints) {
      const init = await fetch(`${daemon.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: ACCEPT },
        body: JSON.stringify(INITIALIZE_REQUEST),
      });
      const id = init.headers.get("mcp-session-id");
      await init.body?.cancel();
      if (id) sessions.set(path, id);
    }
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...endpoints),
        message,
        fc.boolean(),
        async (path, body, inSession) => {
          const session = sessions.get(path);
          const headers: Record<string, string> = {
            "content-type": "application/json",
            accept: ACCEPT,
          };
          if (inSession && session) {
            headers["mcp-session-id"] = session;
            headers["mcp-protocol-version"] = "2025-11-25";
          }
          const reply = await fetch(`${daemon.url}${path}`, {
            method: "POST",
            headers,
            body,
            signal: AbortSignal.timeout(20_000),
          });
          const text = await reply.text();
          assert.ok(
            reply.status < 500,
            `${path} ${body.slice(0, 200)} → ${reply.status} ${
              text.slice(0, 200)
            }`,
          );
        },
      ),
      { numRuns: sized(800, 8_000) },
    );
    assert.equal((await api(daemon, "GET", "/health")).status, 200);
  } finally {
    assert.equal((await daemon.stop()).code, 0);
  }
  assert.deepEqual(daemon.stray, []);
});
