// Issue 35: a gateway name over 64 characters is shortened with a hash
// (tools/kit/tool_names.ts), so it cannot be split back into server and
// tool. Every listing says which it is in `_meta` (`io.agentd/origin`); a call
// through the shortened name is judged and audited as its real
// `<server>.<tool>` (a rule naming both denies it); an agent given the tool by
// its bare name or its server gets the shortened name, and its card tags the
// skill with the server.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type CallToolResult,
  Client,
  StreamableHTTPClientTransport,
  type Tool,
} from "../../platform/mcp_sdk.ts";
import { type Daemon, spawnServe, tempDir, waitFor } from "../helpers.ts";
import { startModelServer } from "../agents/model_server.ts";
import { EVERYTHING, textOf } from "../tools/gateway/upstreams.ts";

const OPERATOR = "operator-token-0123456789-names-s3cr3t";
const ALICE = "alice-agent-token-0123456789-names-s3cr3t";
/** 40 characters, the longest upstream name: with the tool below, 72 > 64. */
const LONG = "a-very-long-upstream-name-for-shortening";
const TOOL = "trigger-long-running-operation";

function originOf(tool: Tool): unknown {
  return tool._meta?.["io.agentd/origin"];
}

async function connect(daemon: Daemon, token: string): Promise<Client> {
  const client = new Client({ name: "names-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

interface AuditRecord {
  caller: string;
  server: string;
  tool: string;
  decision: string;
  rule: string;
  outcome: string;
}

async function audit(daemon: Daemon): Promise<AuditRecord[]> {
  const response = await fetch(
    `${daemon.url}/admin/policy/audit?server=${LONG}&tool=${TOOL}&limit=1000`,
    { headers: { authorization: `Bearer ${OPERATOR}` } },
  );
  assert.equal(response.status, 200);
  return (await response.json()).records;
}

function v1(
  daemon: Daemon,
  path: string,
  token: string,
  body?: unknown,
): Promise<Response> {
  return fetch(`${daemon.url}/v1${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

Deno.test({
  name:
    "security: a shortened gateway name is judged, audited, resolved and tagged as its real server and tool",
  sanitizeResources: false,
  async fn(t) {
    await using dir = await tempDir();
    await using model = await startModelServer();
    const config = join(dir.path, "agentd.json");
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        token: OPERATOR,
        agent_tokens: { alice: ALICE },
        servers: ["memory", "gateway"],
        gateway: {
          connect_timeout_ms: 3_000,
          upstreams: {
            [LONG]: { command: "node", args: [EVERYTHING, "stdio"] },
          },
        },
        agents: { default_model: "openai/default-model", max_steps: 3 },
        policy: {
          rules: [
            {
              id: "no-long-runs-for-agents",
              caller: "agent",
              server: LONG,
              tool: TOOL,
              decision: "deny",
            },
            {
              id: "alice-gateway",
              agent: "alice",
              server: "gateway",
              decision: "allow",
            },
          ],
        },
      }),
    );
    const daemon = await spawnServe(join(dir.path, "data"), {
      extra: ["--config", config],
      env: { ...model.env, AGENTD_TOKEN: OPERATOR },
    });
    const operator = await connect(daemon, OPERATOR);
    const alice = await connect(daemon, ALICE);
    try {
      const tools = await waitFor(
        async () => (await operator.listTools()).tools,
        (listed) => listed.some((tool) => tool.name.startsWith(LONG)),
        30_000,
      );
      const long = tools.find((tool) =>
        JSON.stringify(originOf(tool)) ===
          JSON.stringify({ server: LONG, tool: TOOL })
      );

      await t.step(
        "every listing names its origin; the long one is shortened",
        () => {
          for (const tool of tools) {
            assert.ok(originOf(tool), `${tool.name} names its origin`);
          }
          assert.deepEqual(
            originOf(
              tools.find((tool) => tool.name === "memory__store_memory") ??
                tools[0],
            ),
            { server: "memory", tool: "store_memory" },
          );
          assert.deepEqual(
            originOf(
              tools.find((tool) => tool.name === "list_servers") ?? tools[0],
            ),
            { server: "gateway", tool: "list_servers" },
          );
          assert.ok(long, "the long tool is listed with its origin");
          assert.equal(long.name.length, 64);
          assert.notEqual(long.name, `${LONG}__${TOOL}`);
        },
      );
      const shortened = long?.name ?? "";

      await t.step(
        "a call through the shortened name meets the rule on server and tool, audited once",
        async () => {
          const before = (await audit(daemon)).length;
          const result = await alice.callTool({
            name: shortened,
            arguments: { duration: 1, steps: 1 },
          }) as CallToolResult;
          assert.equal(result.isError, true, JSON.stringify(result));
          assert.match(textOf(result), /no-long-runs-for-agents/);
          const records = (await audit(daemon)).slice(before);
          assert.equal(records.length, 1, JSON.stringify(records));
          assert.equal(records[0].caller, "agent:alice");
          assert.equal(records[0].decision, "denied");
          assert.equal(records[0].rule, "no-long-runs-for-agents");
        },
      );

      await t.step(
        "an agent given the bare tool name gets the shortened one; its turn is denied; its card tags the server",
        async () => {
          const created = await v1(daemon, "/agents", OPERATOR, {
            name: "alice",
            tools: [TOOL, LONG],
          });
          const body = await created.text();
          assert.equal(created.status, 201, body);
          const resolved: string[] = JSON.parse(body).resolved_tools;
          assert.ok(resolved.includes(shortened), body);
          assert.ok(resolved.includes(`${LONG}__echo`), body);
          model.script([
            {
              tool_calls: [{
                name: shortened,
                arguments: { duration: 1, steps: 1 },
              }],
            },
            { text: "done" },
          ]);
          const before = (await audit(daemon)).length;
          const sent = await v1(daemon, "/agents/alice/send", ALICE, {
            message: "run it",
          });
          assert.equal(sent.status, 200, await sent.text());
          const records = (await audit(daemon)).slice(before);
          assert.equal(records.length, 1, JSON.stringify(records));
          assert.equal(records[0].decision, "denied");

          const card = await (await v1(daemon, "/a2a/alice/card", OPERATOR))
            .json();
          const skill = card.skills.find((s: { id: string }) =>
            s.id === shortened
          );
          assert.deepEqual(skill?.tags, ["tool", LONG]);
        },
      );
    } finally {
      await alice.close();
      await operator.close();
      await daemon.stop();
    }
  },
});
