// Hosted memory on another agentd: a central daemon accepting JWTs (HS256)
// whose agent claim binds the caller, and edge daemons with
// `--storage hosted --url <central>/mcp/memory --key <JWT>`. Isolation
// between JWTs of two agents, bad and expired JWTs refused, and the central
// daemon going away and coming back: served from the edge's cache, alerted,
// queued and drained.

import assert from "node:assert/strict";
import { signAgentJwt } from "../../../platform/jwt.ts";
import {
  type Daemon,
  spawnDaemon,
  spawnServe,
  tempDir,
  waitFor,
} from "../../helpers.ts";
import {
  call,
  callError,
  connectMemory as connect,
  memoryHealth,
} from "./scenario.ts";
import { metricValue, startWebhook } from "./observe.ts";

/** An MCP initialize with a bearer token: the status and the error body. */
async function initializeWith(
  daemon: Daemon,
  token: string,
): Promise<{ status: number; body: string; challenge: string | null }> {
  const response = await fetch(`${daemon.url}/mcp/memory`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "jwt-test", version: "1" },
      },
    }),
  });
  return {
    status: response.status,
    body: await response.text(),
    challenge: response.headers.get("www-authenticate"),
  };
}

Deno.test("memory hosted on another agentd over MCP with JWTs: isolation per agent, bad JWTs refused, outage from cache, drained on return", async () => {
  await using dirCentral = await tempDir();
  await using dirA = await tempDir();
  await using dirB = await tempDir();
  await using webhook = startWebhook();
  const secret = `jwt-secret-${crypto.randomUUID()}`;
  const centralEnv = {
    AGENTD_TOKEN: `operator-${crypto.randomUUID()}`,
    AGENTD_JWT__SECRET: secret,
  };
  const daemons: Daemon[] = [];
  const clients: { close(): Promise<void> }[] = [];
  try {
    let central = await spawnServe(dirCentral.path, { env: centralEnv });
    daemons.push(central);
    const aliceJwt = await signAgentJwt({ secret, agent: "alice" });
    const bobJwt = await signAgentJwt({ secret, agent: "bob" });
    const edgeEnv = (jwt: string) => ({
      AGENTD_MEMORY__STORAGE: "hosted",
      AGENTD_MEMORY__URL: `${central.url}/mcp/memory`,
      AGENTD_MEMORY__KEY: jwt,
      AGENTD_MEMORY__SYNC_INTERVAL_MS: "200",
    });
    const a = await spawnServe(dirA.path, {
      env: { ...edgeEnv(aliceJwt), AGENTD_MEMORY__ALERT_WEBHOOK: webhook.url },
    });
    daemons.push(a);
    const b = await spawnServe(dirB.path, { env: edgeEnv(bobJwt) });
    daemons.push(b);
    const onA = await connect(a);
    clients.push(onA);
    const onB = await connect(b);
    clients.push(onB);

    const healthy = await memoryHealth(a);
    assert.equal(healthy.memory.storage, "hosted(agentd)");
    assert.equal(healthy.memory.backend, "ok");

    // Writes through edge A land on the central daemon, in alice's namespace.
    await call(onA.client, "store_memory", {
      namespace: "alice",
      key: "plan",
      value: "ship the release on friday",
      tags: ["work"],
    });
    await call(onA.client, "store_memory", {
      namespace: "alice",
      key: "pin",
      value: "4321",
      tags: ["sensitive"],
    });
    const asAlice = await connect(central, aliceJwt);
    clients.push(asAlice);
    assert.equal(
      (await call(asAlice.client, "retrieve_memory", {
        namespace: "alice",
        key: "plan",
      })).value,
      "ship the release on friday",
    );
    const pin = await call(asAlice.client, "retrieve_memory", {
      namespace: "alice",
      key: "pin",
    });
    assert.equal(pin.value, "4321");
    assert.equal(pin.sensitive, true);
    // Reads, lists, search and conversations through the edge come from the central daemon.
    await call(asAlice.client, "store_memory", {
      namespace: "alice",
      key: "central-only",
      value: "written on the central daemon directly",
    });
    assert.equal(
      (await call(onA.client, "retrieve_memory", {
        namespace: "alice",
        key: "central-only",
      })).value,
      "written on the central daemon directly",
    );
    const listed = await call(onA.client, "list_memories", {
      namespace: "alice",
    });
    assert.deepEqual(
      (listed.entries as { key: string }[]).map((entry) => entry.key),
      ["central-only", "pin", "plan"],
    );
    const found = await call(onA.client, "search_memory", {
      namespace: "alice",
      query: "release friday",
    });
    assert.equal((found.hits as { key: string }[])[0].key, "plan");
    await call(onA.client, "store_conversation", {
      session_id: "standup",
      messages: ["what ships friday?"],
    });
    const centralChat = await call(asAlice.client, "get_conversation_history", {
      session_id: "standup",
    });
    assert.deepEqual(
      (centralChat.messages as { role: string; content: string }[]).map((
        m,
      ) => [m.role, m.content]),
      [["user", "what ships friday?"]],
    );

    // Isolation: each JWT reaches its own agent's namespace only.
    assert.match(
      await callError(onA.client, "store_memory", {
        namespace: "bob",
        key: "x",
        value: "y",
      }),
      /Access denied/,
    );
    assert.match(
      await callError(onB.client, "retrieve_memory", {
        namespace: "alice",
        key: "plan",
      }),
      /Access denied/,
    );
    await call(onB.client, "store_memory", {
      namespace: "bob",
      key: "note",
      value: "bob's own note",
    });
    assert.match(
      await callError(asAlice.client, "retrieve_memory", {
        namespace: "bob",
        key: "note",
      }),
      /Access denied/,
    );
    const asBob = await connect(central, bobJwt);
    clients.push(asBob);
    assert.equal(
      (await call(asBob.client, "retrieve_memory", {
        namespace: "bob",
        key: "note",
      })).value,
      "bob's own note",
    );
    // The same session id names two conversations, one per agent.
    const bobChat = await call(asBob.client, "get_conversation_history", {
      session_id: "standup",
    });
    assert.equal(bobChat.count, 0);

    // Bad JWTs: another key, expired, no agent claim → 401, nothing served.
    const wrongKey = await signAgentJwt({
      secret: `another-secret-${crypto.randomUUID()}`,
      agent: "alice",
    });
    const expired = await signAgentJwt({
      secret,
      agent: "alice",
      expiresIn: Math.floor(Date.now() / 1000) - 60,
    });
    const noAgent = await signAgentJwt({
      secret,
      agent: "alice",
      claim: "sub",
    });
    for (
      const [token, why] of [
        [wrongKey, /signature does not verify/],
        [expired, /expired/],
        [noAgent, /"agent" claim must name an agent/],
        ["not.a.jwt", /Invalid bearer token/],
      ] as const
    ) {
      const refused = await initializeWith(central, token);
      assert.equal(refused.status, 401, refused.body);
      assert.match(JSON.parse(refused.body).error.message, why);
      assert.match(refused.challenge ?? "", /invalid_token/);
    }

    // The central daemon goes away: edge A serves from its cache, queues, alerts.
    const port = central.port;
    assert.equal((await central.stop()).code, 0);
    assert.equal(
      (await call(onA.client, "retrieve_memory", {
        namespace: "alice",
        key: "plan",
      })).value,
      "ship the release on friday",
    );
    await call(onA.client, "store_memory", {
      namespace: "alice",
      key: "offline",
      value: "written while the central daemon was down",
    });
    const degraded = await memoryHealth(a);
    assert.equal(degraded.memory.status, "degraded");
    assert.equal(degraded.memory.queued_writes, 1);
    assert.match(
      String(degraded.memory.backend_detail),
      /Central memory \(agentd\) unreachable since .* 1 writes? queued/,
    );
    const alerted = await waitFor(
      () => Promise.resolve(webhook.received),
      (got) => got.some((x) => x.event === "memory_storage_unavailable"),
    );
    assert.equal(alerted[0].backend, "hosted(agentd)");
    assert.equal(await metricValue(a, "agentd_memory_storage_degraded"), 1);
    assert.equal(await metricValue(a, "agentd_memory_queued_writes"), 1);
    assert.equal(
      await metricValue(a, 'agentd_memory_storage_cache_total{result="hit"}'),
      1,
      "the one read while the central daemon was down came from the cache",
    );

    // Back on the same port: the queue drains into it.
    central = await spawnDaemon(
      ["serve", "--port", String(port), "--data-dir", dirCentral.path],
      { env: centralEnv },
    );
    daemons.push(central);
    await waitFor(
      () => memoryHealth(a),
      (h) => h.memory.backend === "ok" && h.memory.queued_writes === 0,
      60_000,
    );
    await waitFor(
      () => Promise.resolve(webhook.received),
      (got) => got.some((x) => x.event === "memory_storage_recovered"),
    );
    assert.equal(await metricValue(a, "agentd_memory_storage_degraded"), 0);
    const again = await connect(central, aliceJwt);
    clients.push(again);
    assert.equal(
      (await call(again.client, "retrieve_memory", {
        namespace: "alice",
        key: "offline",
      })).value,
      "written while the central daemon was down",
    );
    for (const daemon of [a, b]) {
      const logs = JSON.stringify(daemon.logs);
      assert.ok(!logs.includes(aliceJwt) && !logs.includes(bobJwt));
    }
    assert.ok(!JSON.stringify(a.logs).includes(webhook.url));
  } finally {
    for (const client of clients) await client.close().catch(() => {});
    for (const daemon of daemons) await daemon.stop();
  }
});
