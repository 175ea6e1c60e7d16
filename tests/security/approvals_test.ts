// Issue 33, row 2: an approval is answered by a person, never by the caller
// being judged. An agent whose own MCP client declares elicitation and
// answers `accept` must not get its call run: the question waits in the
// operator's pending list (which an agent token cannot answer over HTTP) and
// reaches the operator's own MCP client when one that can elicit is
// connected. "Approve for the session" covers that agent only.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  Client,
  ElicitRequestSchema,
  type ElicitResult,
  StreamableHTTPClientTransport,
} from "../../platform/mcp_sdk.ts";
import {
  type Daemon,
  spawnServe,
  tempDir,
  textOf,
  waitFor,
} from "../helpers.ts";

const OPERATOR = "approvals-operator-token-0123456789";
const ALICE = "approvals-alice-agent-token-0123456789";
const BOB = "approvals-bob-agent-token-0123456789";

interface Asked {
  messages: string[];
}

/** An MCP client at `path`; with `answer` it declares elicitation and answers every question so. */
async function connect(
  daemon: Daemon,
  path: string,
  token: string,
  answer?: () => ElicitResult | Promise<ElicitResult>,
): Promise<{ client: Client; asked: Asked }> {
  const asked: Asked = { messages: [] };
  const client = new Client(
    { name: "approvals-attack", version: "1.0.0" },
    answer ? { capabilities: { elicitation: { form: {} } } } : {},
  );
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.messages.push(request.params.message);
      return answer();
    });
  }
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${daemon.url}${path}`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return { client, asked };
}

interface Pending {
  id: string;
  caller: string;
  status: string;
  tool: string;
}

async function pendingList(daemon: Daemon): Promise<Pending[]> {
  const response = await fetch(`${daemon.url}/admin/policy/approvals`, {
    headers: { authorization: `Bearer ${OPERATOR}` },
  });
  assert.equal(response.status, 200);
  const body = await response.json();
  return body.approvals.filter((item: Pending) => item.status === "pending");
}

async function decide(
  daemon: Daemon,
  id: string,
  verb: "approve" | "deny",
  token: string,
  scope: "once" | "session" = "once",
): Promise<number> {
  const response = await fetch(
    `${daemon.url}/admin/policy/approvals/${id}/${verb}`,
    {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      body: JSON.stringify({ scope }),
    },
  );
  await response.body?.cancel();
  return response.status;
}

async function startDaemon(dir: string): Promise<Daemon> {
  const config = join(dir, "agentd.json");
  await Deno.writeTextFile(
    config,
    JSON.stringify({
      servers: ["memory", "gateway"],
      policy: {
        rules: [{
          id: "ask-memory-writes",
          server: "memory",
          tool: "store_memory",
          decision: "ask",
        }],
        ask_timeout_ms: 60_000,
      },
    }),
  );
  return await spawnServe(join(dir, "data"), {
    extra: ["--config", config],
    env: {
      AGENTD_TOKEN: OPERATOR,
      AGENTD_AGENT_TOKENS: JSON.stringify({ alice: ALICE, bob: BOB }),
    },
  });
}

function store(client: Client, namespace: string, key: string) {
  return client.callTool({
    name: "store_memory",
    arguments: { namespace, key, value: `value of ${key}` },
  });
}

async function stored(
  client: Client,
  namespace: string,
  key: string,
): Promise<boolean> {
  const result = await client.callTool({
    name: "retrieve_memory",
    arguments: { namespace, key },
  });
  return result.isError !== true && textOf(result).includes(`value of ${key}`);
}

Deno.test({
  name:
    "security: an agent's own client never approves its call; the pending list and the operator decide",
  sanitizeResources: false,
  async fn() {
    await using dir = await tempDir();
    const daemon = await startDaemon(dir.path);
    const clients: Client[] = [];
    try {
      // Alice's client declares elicitation and would accept anything, for the session.
      const alice = await connect(daemon, "/mcp/memory", ALICE, () => ({
        action: "accept",
        content: { scope: "session" },
      }));
      clients.push(alice.client);

      // Her call waits in the pending list instead of being approved by her client.
      const first = store(alice.client, "alice", "first");
      const [pending] = await waitFor(
        () => pendingList(daemon),
        (list) => list.length === 1,
      );
      assert.equal(pending.caller, "agent:alice");
      assert.equal(pending.tool, "store_memory");
      assert.deepEqual(alice.asked.messages, [], "alice's client was asked");

      // Her token cannot answer it over HTTP.
      assert.equal(await decide(daemon, pending.id, "approve", ALICE), 403);
      // The operator declines: nothing is stored.
      assert.equal(await decide(daemon, pending.id, "deny", OPERATOR), 200);
      const refused = await first;
      assert.equal(refused.isError, true);
      assert.match(textOf(refused), /operator \(http\) declined/);
      assert.equal(await stored(alice.client, "alice", "first"), false);

      // With an operator MCP session that can elicit connected, the question reaches it.
      const operator = await connect(daemon, "/mcp", OPERATOR, () => ({
        action: "accept",
        content: { scope: "once" },
      }));
      clients.push(operator.client);
      const second = await store(alice.client, "alice", "second");
      assert.notEqual(second.isError, true, textOf(second));
      assert.equal(operator.asked.messages.length, 1);
      assert.match(operator.asked.messages[0], /agent:alice/);
      assert.match(operator.asked.messages[0], /memory\.store_memory/);
      assert.deepEqual(alice.asked.messages, [], "alice's client was asked");
      assert.equal(await stored(alice.client, "alice", "second"), true);

      const audit = await fetch(
        `${daemon.url}/admin/policy/audit?caller=agent:alice&tool=store_memory`,
        { headers: { authorization: `Bearer ${OPERATOR}` } },
      );
      const records = (await audit.json()).records;
      assert.deepEqual(
        records.map((record: { decision: string; decided_by: string }) => [
          record.decision,
          record.decided_by,
        ]),
        [
          ["declined", "operator (http)"],
          ["approved", "the operator (elicitation)"],
        ],
      );
    } finally {
      for (const client of clients) await client.close().catch(() => {});
      await daemon.stop();
    }
  },
});

Deno.test({
  name:
    "security: an operator's approval for the session covers that agent only",
  sanitizeResources: false,
  async fn() {
    await using dir = await tempDir();
    const daemon = await startDaemon(dir.path);
    const clients: Client[] = [];
    try {
      const alice = await connect(daemon, "/mcp/memory", ALICE);
      const bob = await connect(daemon, "/mcp/memory", BOB, () => ({
        action: "accept",
        content: { scope: "session" },
      }));
      clients.push(alice.client, bob.client);

      const first = store(alice.client, "alice", "a1");
      const [pending] = await waitFor(
        () => pendingList(daemon),
        (list) => list.length === 1,
      );
      assert.equal(
        await decide(daemon, pending.id, "approve", OPERATOR, "session"),
        200,
      );
      assert.notEqual((await first).isError, true);
      // The rest of alice's session runs without asking again.
      const again = await store(alice.client, "alice", "a2");
      assert.notEqual(again.isError, true, textOf(again));

      // Bob's same call is still asked: the grant is alice's, and bob's own client cannot answer.
      const bobs = store(bob.client, "bob", "b1");
      const [bobPending] = await waitFor(
        () => pendingList(daemon),
        (list) => list.length === 1,
      );
      assert.equal(bobPending.caller, "agent:bob");
      assert.deepEqual(bob.asked.messages, []);
      assert.equal(await decide(daemon, bobPending.id, "deny", OPERATOR), 200);
      assert.equal((await bobs).isError, true);
      assert.equal(await stored(bob.client, "bob", "b1"), false);
    } finally {
      for (const client of clients) await client.close().catch(() => {});
      await daemon.stop();
    }
  },
});
