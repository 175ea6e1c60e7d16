// Issue 33, row 1 and /health: with agent tokens or JWTs configured, a
// caller without credentials is never the operator. The daemon (every HTTP
// face) refuses to start without a daemon token; and an agent's token sees
// the daemon's status in /health, not its details (memory's namespaces are
// agent names).

import assert from "node:assert/strict";
import { type Daemon, spawnDaemon, tempDir, waitFor } from "../helpers.ts";

const ALICE = "alice-token-" + crypto.randomUUID();
const OPERATOR = "operator-token-" + crypto.randomUUID();

/** Spawns `args`; the daemon's refusal (its stderr) when it exits before listening, or fails when it listens. */
async function refusal(
  args: string[],
  env: Record<string, string>,
): Promise<string> {
  let daemon: Daemon;
  try {
    daemon = await spawnDaemon(args, { env });
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  // Today's behaviour: it listens, and a request without credentials is the operator.
  const created = await fetch(`${daemon.url}/v1/agents`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "mallory", model: "openai/x" }),
  });
  await created.body?.cancel();
  await daemon.stop();
  assert.fail(
    `agentd started with ${
      Object.keys(env).join(", ")
    } and no daemon token; POST /v1/agents without credentials answered ${created.status}`,
  );
}

const FACES: [string, (dir: string) => string[]][] = [
  ["serve", (dir) => ["serve", "--port", "0", "--data-dir", dir]],
  [
    "mcp memory --port",
    (dir) => ["mcp", "memory", "--port", "0", "--data-dir", dir],
  ],
];

for (const [face, args] of FACES) {
  Deno.test(`security identity: agentd ${face} with agent tokens but no daemon token refuses to start, saying what to set`, async () => {
    await using dir = await tempDir();
    const stderr = await refusal(args(dir.path), {
      AGENTD_AGENT_TOKENS: JSON.stringify({ alice: ALICE }),
    });
    assert.match(stderr, /agent_tokens is set without a daemon token/);
    assert.match(stderr, /AGENTD_TOKEN/);
    assert.match(stderr, /token_file/);
    assert.ok(!stderr.includes(ALICE), "the agent token is not echoed");
  });
}

Deno.test("security identity: agentd serve with a JWT config but no daemon token refuses to start", async () => {
  await using dir = await tempDir();
  const stderr = await refusal(FACES[0][1](dir.path), {
    AGENTD_JWT__SECRET: "jwt-secret-" + crypto.randomUUID(),
  });
  assert.match(stderr, /jwt is set without a daemon token/);
  assert.match(stderr, /AGENTD_TOKEN/);
});

Deno.test("security identity: with a daemon token, no credentials is refused everywhere; an agent's /health has no details and /metrics is the operator's", async () => {
  await using dir = await tempDir();
  const daemon = await spawnDaemon(
    [
      "serve",
      "--port",
      "0",
      "--data-dir",
      dir.path,
      "--servers",
      "memory,gateway",
    ],
    {
      env: {
        AGENTD_TOKEN: OPERATOR,
        AGENTD_AGENT_TOKENS: JSON.stringify({ alice: ALICE }),
      },
    },
  );
  try {
    for (
      const [method, path] of [
        ["POST", "/v1/agents"],
        ["GET", "/admin/policy"],
        ["GET", "/v1/agents"],
        ["GET", "/health"],
      ]
    ) {
      const anonymous = await fetch(`${daemon.url}${path}`, {
        method,
        headers: { "content-type": "application/json" },
        body: method === "POST" ? JSON.stringify({ name: "mallory" }) : null,
      });
      await anonymous.body?.cancel();
      assert.equal(anonymous.status, 401, `${method} ${path}`);
    }
    const as = (token: string) => ({ authorization: `Bearer ${token}` });
    // memory loads on first use: the operator's session starts it, so it has details.
    const opened = await fetch(`${daemon.url}/mcp/memory`, {
      method: "POST",
      headers: {
        ...as(OPERATOR),
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
          clientInfo: { name: "identity-test", version: "1.0.0" },
        },
      }),
    });
    await opened.body?.cancel();
    assert.equal(opened.status, 200);
    const operator = await waitFor(
      async () =>
        await (await fetch(`${daemon.url}/health`, {
          headers: as(OPERATOR),
        })).json(),
      (health) => health.servers.memory.phase === "running",
    );
    assert.equal(typeof operator.servers.memory.details, "object");
    const alice = await fetch(`${daemon.url}/health`, { headers: as(ALICE) });
    assert.equal(alice.status, 200);
    const body = await alice.json();
    assert.equal(body.servers.memory.phase, "running");
    assert.equal(
      body.servers.memory.details,
      undefined,
      "memory's details (entries per namespace = agent names) are the operator's",
    );
    const metrics = await fetch(`${daemon.url}/metrics`, {
      headers: as(ALICE),
    });
    assert.equal(metrics.status, 403);
    assert.equal((await metrics.json()).error.code, "forbidden");
    const scraped = await fetch(`${daemon.url}/metrics`, {
      headers: as(OPERATOR),
    });
    await scraped.body?.cancel();
    assert.equal(scraped.status, 200);
  } finally {
    await daemon.stop();
  }
});
