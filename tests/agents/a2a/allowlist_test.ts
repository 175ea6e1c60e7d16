// Remote A2A addresses are chosen by callers and by models: only loopback
// ones and the origins in agents.remote_agents are ever contacted.

import assert from "node:assert/strict";
import { RemoteAgents } from "../../../agents/a2a/client.ts";
import { MemoryStore } from "../../../platform/store/memory.ts";
import { a2aApp, storedKeys } from "./fixture.ts";

// TEST-NET-1 (RFC 5737): never routed; a fetch there would hang, not answer.
const OUTSIDE = "http://192.0.2.1:8765/v1/a2a/mallory";

Deno.test("a2a allow-list: a non-loopback remote is refused (403) before any request, and nothing is stored", async () => {
  const fetched: string[] = [];
  const store = new MemoryStore();
  const { app } = a2aApp(store, {
    fetchFn: (input) => {
      fetched.push(String(input));
      return Promise.reject(new Error("must not be called"));
    },
  });
  const before = await storedKeys(store);
  const card = await app.request(
    `/v1/a2a/${encodeURIComponent(OUTSIDE)}/card`,
  );
  assert.equal(card.status, 403);
  assert.match(
    (await card.json()).error.message,
    /http:\/\/192\.0\.2\.1:8765 is not an allowed remote: add it to agents\.remote_agents/,
  );
  const sent = await app.request("/v1/a2a/message", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      version: "1.0.0",
      type: "request",
      from_agent: "echo",
      to_agent: OUTSIDE,
      content: "hello",
      priority: "high",
    }),
  });
  assert.equal(sent.status, 403);
  await sent.body?.cancel();
  assert.deepEqual(fetched, [], "no request left the daemon");
  assert.deepEqual(await storedKeys(store), before, "nothing stored");
});

Deno.test("a2a allow-list: listed origins and '*' are allowed; a card cannot send delivery elsewhere", async () => {
  const card = {
    name: "relay",
    version: "1.0.0",
    description: "",
    supportedInterfaces: [{
      url: "http://192.0.2.1:9/a2a",
      protocolBinding: "JSONRPC",
      protocolVersion: "1.0",
    }],
    capabilities: {},
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [],
  };
  const served = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => Response.json(card),
  );
  try {
    const address = `http://127.0.0.1:${served.addr.port}/agent-card.json`;
    const remote = new RemoteAgents();
    // The card itself is on loopback, so it may be read…
    assert.equal((await remote.card(address)).name, "relay");
    // …but it points delivery at an origin that is not allowed.
    await assert.rejects(
      remote.send(address, { text: "hi" }),
      /192\.0\.2\.1:9 is not an allowed remote/,
    );
    const listed = new RemoteAgents({
      allowedOrigins: ["http://192.0.2.1:8765/ignored/path"],
    });
    listed.assertAllowed(OUTSIDE);
    new RemoteAgents({ allowedOrigins: ["*"] }).assertAllowed(
      "https://agents.example.com/v1/a2a/x",
    );
    assert.throws(
      () => listed.assertAllowed("https://agents.example.com/v1/a2a/x"),
      /not an allowed remote/,
    );
  } finally {
    await served.shutdown();
  }
});
