// Agent cards: the seed's card of local agents (by name and id) and of
// remote ones (fetched from a second server over a real socket), the A2A
// v1.0 and 0.3 cards at the well-known paths, and the failures.

import assert from "node:assert/strict";
import { AgentCard } from "@a2a-js/sdk";
import {
  isLegacyAgentCard,
  parseLegacyAgentCard,
} from "@a2a-js/sdk/compat/v0_3/client";
import { MemoryStore } from "../../../platform/store/memory.ts";
import { VERSION } from "../../../platform/version.ts";
import { a2aApp, serve, storedKeys } from "./fixture.ts";

const BASE = "http://localhost:8765";

function remoteRef(url: string): string {
  return encodeURIComponent(url);
}

Deno.test("card: a local agent's seed card by name and by id", async () => {
  const store = new MemoryStore();
  const { app } = a2aApp(store);
  const byName = await app.request(`${BASE}/v1/a2a/echo/card`);
  assert.equal(byName.status, 200);
  const card = await byName.json();
  assert.equal(card.name, "echo");
  assert.match(card.version, /^\d+\.\d+\.\d+$/);
  assert.equal(card.version, VERSION);
  assert.deepEqual(card.protocols, ["a2a"]);
  assert.deepEqual(card.endpoints, { a2a: `${BASE}/v1/a2a/echo` });
  assert.deepEqual(card.capabilities, [
    "streaming",
    "conversation",
    "memory__store_memory",
    "browser-automation",
  ]);
  // The A2A fields that do not clash ride along.
  assert.equal(card.description, "Repeats what it hears, louder");
  assert.deepEqual(card.supportedInterfaces, [
    {
      url: `${BASE}/v1/a2a/echo`,
      protocolBinding: "JSONRPC",
      protocolVersion: "1.0",
    },
    {
      url: `${BASE}/v1/a2a/echo`,
      protocolBinding: "JSONRPC",
      protocolVersion: "0.3",
    },
  ]);
  assert.deepEqual(card.defaultOutputModes, ["text/plain"]);

  const byId = await (await app.request(`${BASE}/v1/a2a/agt_echo/card`)).json();
  assert.deepEqual(byId, card);
  // {base_url} is the request's origin.
  const other =
    await (await app.request("http://127.0.0.1:9999/v1/a2a/echo/card"))
      .json();
  assert.equal(other.endpoints.a2a, "http://127.0.0.1:9999/v1/a2a/echo");
  assert.deepEqual(await storedKeys(store), [], "reading cards stores nothing");
});

Deno.test("card: unknown local agent is a 404 in the error shape", async () => {
  const { app } = a2aApp(new MemoryStore());
  const res = await app.request(`${BASE}/v1/a2a/nobody/card`);
  assert.equal(res.status, 404);
  const body = await res.json();
  assert.equal(body.error.code, "not_found");
  assert.match(body.error.message, /No agent "nobody"/);
  const wellKnown = await app.request(
    `${BASE}/v1/a2a/nobody/.well-known/agent-card.json`,
  );
  assert.equal(wellKnown.status, 404);
  await wellKnown.body?.cancel();
});

Deno.test("card: the well-known card is a strict A2A v1.0 AgentCard for A2A-Version 1.0", async () => {
  const { app } = a2aApp(new MemoryStore());
  const res = await app.request(
    `${BASE}/v1/a2a/echo/.well-known/agent-card.json`,
    {
      headers: { "A2A-Version": "1.0" },
    },
  );
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("vary"), "A2A-Version");
  const card = await res.json();
  // Every field is one the v1.0 schema knows, with its type: a ProtoJSON round trip keeps it whole.
  assert.deepEqual(AgentCard.toJSON(AgentCard.fromJSON(card)), card);
  assert.deepEqual(card.capabilities, {
    streaming: true,
    pushNotifications: false,
    extendedAgentCard: false,
  });
  assert.deepEqual(card.skills[1], {
    id: "memory__store_memory",
    name: "memory__store_memory",
    description: "Uses the tool memory__store_memory",
    tags: ["tool", "memory"],
  });
  assert.equal(card.protocols, undefined);
});

Deno.test("card: without A2A-Version the well-known card is a 0.3 card carrying the v1.0 interfaces", async () => {
  const { app } = a2aApp(new MemoryStore());
  const card = await (await app.request(
    `${BASE}/v1/a2a/slow/.well-known/agent-card.json`,
  )).json();
  assert.equal(card.url, `${BASE}/v1/a2a/slow`);
  assert.equal(card.preferredTransport, "JSONRPC");
  assert.equal(card.protocolVersion, "0.3.0");
  assert.deepEqual(card.capabilities, {
    streaming: true,
    pushNotifications: false,
  });
  assert.equal(card.description, "Takes its time");
  // A v1.0 reader prefers the embedded interfaces; a 0.3 reader uses url.
  assert.equal(isLegacyAgentCard(card), false);
  const { supportedInterfaces: _, ...legacyOnly } = card;
  assert.equal(isLegacyAgentCard(legacyOnly), true);
  const parsed = parseLegacyAgentCard(legacyOnly);
  assert.equal(parsed.name, "slow");
  assert.deepEqual(
    parsed.supportedInterfaces.map((
      i,
    ) => [i.url, i.protocolBinding, i.protocolVersion]),
    [[`${BASE}/v1/a2a/slow`, "JSONRPC", "0.3.0"]],
  );
});

Deno.test("card: /.well-known/agent-card.json serves the first agent", async () => {
  const { app } = a2aApp(new MemoryStore());
  const card = await (await app.request(`${BASE}/.well-known/agent-card.json`, {
    headers: { "A2A-Version": "1.0" },
  })).json();
  assert.equal(card.name, "echo");
  assert.equal(card.supportedInterfaces[0].url, `${BASE}/v1/a2a/echo`);
  const none = a2aApp(new MemoryStore(), { agents: [] });
  const res = await none.app.request(`${BASE}/.well-known/agent-card.json`);
  assert.equal(res.status, 404);
  await res.body?.cancel();
});

Deno.test("card: a remote agent's card, fetched over a socket from a second daemon", async () => {
  const remote = a2aApp(new MemoryStore());
  const server = serve(remote.app.fetch);
  try {
    const { app } = a2aApp(new MemoryStore());
    // By its endpoint (the card is found below it) …
    const res = await app.request(
      `${BASE}/v1/a2a/${remoteRef(`${server.url}/v1/a2a/slow`)}/card`,
    );
    assert.equal(res.status, 200);
    const card = await res.json();
    assert.equal(card.name, "slow");
    assert.equal(card.version, VERSION);
    assert.deepEqual(card.capabilities, ["streaming", "conversation"]);
    assert.deepEqual(card.protocols, ["a2a"]);
    assert.deepEqual(card.endpoints, { a2a: `${server.url}/v1/a2a/slow` });
    // … by its base (the origin's default agent) …
    const base =
      await (await app.request(`${BASE}/v1/a2a/${remoteRef(server.url)}/card`))
        .json();
    assert.equal(base.name, "echo");
    // … and by the URL of a card (the seed's own card works too).
    const seed = await (await app.request(
      `${BASE}/v1/a2a/${remoteRef(`${server.url}/v1/a2a/echo/card`)}/card`,
    )).json();
    assert.equal(seed.name, "echo");
    assert.deepEqual(seed.endpoints, { a2a: `${server.url}/v1/a2a/echo` });
  } finally {
    await server.close();
  }
});

Deno.test("card: a plain 0.3 remote card is read too (its version made three-part)", async () => {
  const server = serve(() =>
    Response.json({
      name: "legacy",
      description: "An old agent",
      url: "http://127.0.0.1:1/rpc",
      version: "2.1",
      protocolVersion: "0.3.0",
      capabilities: { streaming: false, pushNotifications: true },
      defaultInputModes: ["text/plain"],
      defaultOutputModes: ["text/plain"],
      skills: [{
        id: "translate",
        name: "Translate",
        description: "",
        tags: [],
      }],
    })
  );
  try {
    const { app } = a2aApp(new MemoryStore());
    const card = await (await app.request(
      `${BASE}/v1/a2a/${remoteRef(`${server.url}/agent.json`)}/card`,
    )).json();
    assert.equal(card.name, "legacy");
    assert.equal(card.version, "2.1.0");
    assert.deepEqual(card.capabilities, ["push_notifications", "translate"]);
    assert.deepEqual(card.endpoints, { a2a: "http://127.0.0.1:1/rpc" });
  } finally {
    await server.close();
  }
});

Deno.test("card: unreachable, invalid, oversized or silent remote cards are a 502 with the reason", async () => {
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const deadPort = closed.addr.port;
  closed.close();
  const hang = Promise.withResolvers<void>();
  const server = serve(async (request) => {
    const path = new URL(request.url).pathname;
    if (path === "/html/.well-known/agent-card.json") {
      return new Response("<html></html>", {
        headers: { "content-type": "text/html" },
      });
    }
    if (path === "/nameless.json") return Response.json({ url: "http://x" });
    if (path === "/huge.json") {
      return Response.json({ name: "huge", padding: "x".repeat(300 * 1024) });
    }
    if (path === "/silent.json") {
      await hang.promise;
      return Response.json({});
    }
    return new Response("no", { status: 404 });
  });
  try {
    const { app } = a2aApp(new MemoryStore(), { cardTimeoutMs: 200 });
    const cases: [string, RegExp][] = [
      [
        `http://127.0.0.1:${deadPort}/v1/a2a/bob`,
        /no agent card found.*(refused|connect)/i,
      ],
      [`${server.url}/html`, /not JSON/],
      [`${server.url}/nameless.json`, /not an A2A agent card.*name/],
      [`${server.url}/huge.json`, /larger than 262144 bytes/],
      [`${server.url}/silent.json`, /no answer within 200 ms/],
      [`${server.url}/missing`, /HTTP 404/],
      ["ftp://example.test/card", /No agent/],
    ];
    for (const [address, pattern] of cases) {
      const res = await app.request(
        `${BASE}/v1/a2a/${remoteRef(address)}/card`,
      );
      const body = await res.json();
      if (address.startsWith("ftp:")) {
        assert.equal(res.status, 404, address);
        continue;
      }
      assert.equal(res.status, 502, address);
      assert.equal(body.error.code, "bad_gateway", address);
      assert.match(body.error.message, pattern, address);
      assert.equal(body.error.details.address, address);
    }
  } finally {
    hang.resolve();
    await server.close();
  }
});
