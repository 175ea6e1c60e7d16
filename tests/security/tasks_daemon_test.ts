// Issue 36 in a real `agentd serve`, as an attacker holding one agent's
// token: alice's tasks (import_memories, on memory's own endpoint and
// through the gateway) are "not found" to mallory on every endpoint, and
// absent from her tasks/list and /admin/tasks; the public paths the session
// added (the icons, the server card) serve their fixed content only: no
// path around the caller check by way of /icons/, nothing secret in the card.

import assert from "node:assert/strict";
import {
  CallToolResultSchema,
  Client,
  CreateTaskResultSchema,
  StreamableHTTPClientTransport,
} from "../../platform/mcp_sdk.ts";
import { type Daemon, rawRequest, spawnServe, tempDir } from "../helpers.ts";
import { rpcError } from "../tools/tasks_harness.ts";

const OPERATOR = "operator-token-0123456789-sec-tasks";
const ALICE = "alice-agent-token-0123456789-sec-tasks";
const MALLORY = "mallory-agent-token-0123456789-sec-tasks";
const SECRET_VALUE = "alice-private-value-7d1e";

async function connect(
  daemon: Daemon,
  path: string,
  token: string,
): Promise<Client> {
  const client = new Client({ name: "sec-tasks", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${daemon.url}${path}`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

async function adminTasks(daemon: Daemon, token: string) {
  const response = await fetch(`${daemon.url}/admin/tasks`, {
    headers: { authorization: `Bearer ${token}` },
  });
  assert.equal(response.status, 200);
  const body = await response.text();
  return { body, tasks: JSON.parse(body).tasks as Record<string, unknown>[] };
}

Deno.test("security tasks (serve): an agent's token reaches no other agent's task on any endpoint, nor in /admin/tasks; icons and the server card open nothing else", async () => {
  await using dir = await tempDir();
  const daemon = await spawnServe(dir.path, {
    env: {
      AGENTD_SERVERS: "gateway,memory",
      AGENTD_TOKEN: OPERATOR,
      AGENTD_AGENT_TOKENS: JSON.stringify({ alice: ALICE, mallory: MALLORY }),
    },
  });
  const clients: Client[] = [];
  const open = async (path: string, token: string) => {
    const client = await connect(daemon, path, token);
    clients.push(client);
    return client;
  };
  try {
    // Alice's tasks: one on memory's endpoint, one through the gateway.
    const ids: string[] = [];
    for (
      const [path, tool] of [
        ["/mcp/memory", "import_memories"],
        ["/mcp", "memory__import_memories"],
      ]
    ) {
      const alice = await open(path, ALICE);
      const created = await alice.request(
        {
          method: "tools/call",
          params: {
            name: tool,
            arguments: {
              namespace: "alice",
              entries: [{ key: `k-${ids.length}`, value: SECRET_VALUE }],
            },
            task: { ttl: 120_000 },
          },
        },
        CreateTaskResultSchema,
      );
      const id = created.task.taskId;
      const result = await alice.experimental.tasks.getTaskResult(
        id,
        CallToolResultSchema,
      );
      assert.notEqual(result.isError, true, JSON.stringify(result));
      ids.push(id);
    }

    // Mallory, on every endpoint: not found, whatever the method; her list is empty.
    for (const path of ["/mcp", "/mcp/memory"]) {
      const mallory = await open(path, MALLORY);
      for (const id of ids) {
        for (
          const attempt of [
            () => mallory.experimental.tasks.getTask(id),
            () =>
              mallory.experimental.tasks.getTaskResult(
                id,
                CallToolResultSchema,
              ),
            () => mallory.experimental.tasks.cancelTask(id),
          ]
        ) {
          const refused = await rpcError(attempt());
          assert.equal(refused.code, -32602, `${path} ${id}`);
          assert.match(refused.message, /Task not found/);
          assert.doesNotMatch(refused.message, new RegExp(SECRET_VALUE));
        }
      }
      assert.deepEqual(
        (await mallory.experimental.tasks.listTasks()).tasks,
        [],
      );
    }

    // /admin/tasks: the operator sees both (as alice's); mallory none; alice hers.
    const all = await adminTasks(daemon, OPERATOR);
    for (const id of ids) {
      assert.equal(
        all.tasks.find((row) => row.id === id)?.caller,
        "agent:alice",
        all.body,
      );
    }
    const mallorys = await adminTasks(daemon, MALLORY);
    assert.deepEqual(mallorys.tasks, []);
    const alices = await adminTasks(daemon, ALICE);
    assert.deepEqual(
      alices.tasks.map((row) => row.id).sort(),
      [...ids].sort(),
    );
    // Without a token: refused like any other /admin path.
    const anonymous = await fetch(`${daemon.url}/admin/tasks`);
    assert.equal(anonymous.status, 401);
    await anonymous.body?.cancel();

    // Icons are public: each path exact, and none leads past the caller check.
    const card = await fetch(`${daemon.url}/.well-known/mcp.json`);
    assert.equal(card.status, 200);
    const cardText = await card.text();
    const icon = new URL(
      String(JSON.parse(cardText).icons?.[0]?.src ?? ""),
    ).pathname;
    assert.match(icon, /^\/icons\/.+\.svg$/);
    const svg = await fetch(`${daemon.url}${icon}`);
    assert.equal(svg.status, 200);
    assert.equal(svg.headers.get("x-content-type-options"), "nosniff");
    assert.match(
      svg.headers.get("content-security-policy") ?? "",
      /default-src 'none'/,
    );
    await svg.body?.cancel();
    for (
      const path of [
        "/icons/../admin/tasks",
        "/icons/%2e%2e/admin/tasks",
        "/icons/..%2fadmin%2ftasks",
        `${icon}/../../admin/tasks`,
        `${icon}/..%2f..%2fadmin/tasks`,
        "/icons/..%5c..%5cadmin/tasks",
        "/icons//admin/tasks",
        `${icon}%00`,
        `${icon}/`,
        "/icons/../../../../etc/passwd",
        "/.well-known/mcp.json/../../admin/tasks",
        "/platform-auth/elicitation/../../admin/tasks",
      ]
    ) {
      const answer = await rawRequest(daemon.port, {
        method: "GET",
        path,
        headers: { host: `127.0.0.1:${daemon.port}` },
      });
      assert.ok(
        answer.status === 401 || answer.status === 404 ||
          answer.status === 400,
        `${path}: ${answer.status} ${answer.body.slice(0, 200)}`,
      );
      assert.doesNotMatch(answer.body, /"tasks"|root:|agent:alice/, path);
    }

    // The card is public and says nothing secret: no token, no data dir, no task.
    for (
      const secret of [OPERATOR, ALICE, MALLORY, dir.path, SECRET_VALUE, ...ids]
    ) {
      assert.ok(!cardText.includes(secret), `the card holds ${secret}`);
    }
    const asAgent = await fetch(`${daemon.url}/.well-known/mcp.json`, {
      headers: { authorization: `Bearer ${MALLORY}` },
    });
    assert.equal(await asAgent.text(), cardText);
  } finally {
    for (const client of clients) await client.close();
    assert.equal((await daemon.stop()).code, 0);
  }
});
