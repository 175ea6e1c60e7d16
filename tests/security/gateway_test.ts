// Issue 33, row 3 and the gateway's smaller items, as an attacker holding one
// agent's token: every way to reach an external upstream's tool (its gateway
// name, route_tool_call, broadcast_tool_call, call_tool on demand and in "all"
// mode, an agent's turn on /v1) meets a deny rule on `<upstream>.<tool>` and
// leaves exactly one audit record of it; list_servers and /admin show agents
// no command line; register_server refuses link-local targets and does not
// echo what answers at a probed URL.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type CallToolResult,
  Client,
  StreamableHTTPClientTransport,
} from "../../platform/mcp_sdk.ts";
import { type Daemon, spawnServe, tempDir, waitFor } from "../helpers.ts";
import { startModelServer } from "../agents/model_server.ts";
import { EVERYTHING, textOf } from "../tools/gateway/upstreams.ts";

const OPERATOR = "operator-token-0123456789-gw-s3cr3t";
const ALICE = "alice-agent-token-0123456789-gw-s3cr3t";
const BODY_SECRET = "internal-body-SECRET-5e0c1d";

async function connect(
  daemon: Daemon,
  token: string,
  query = "",
): Promise<Client & AsyncDisposable> {
  const client = new Client({ name: "security-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp${query}`), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return Object.assign(client, {
    [Symbol.asyncDispose]: () => client.close(),
  });
}

async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  const result = await client.callTool({ name, arguments: args });
  assert.ok("content" in result, JSON.stringify(result));
  return result as CallToolResult;
}

interface AuditRecord {
  caller: string;
  server: string;
  tool: string;
  args: Record<string, unknown>;
  decision: string;
  outcome: string;
}

async function audit(
  daemon: Daemon,
  server: string,
  tool: string,
): Promise<AuditRecord[]> {
  const response = await fetch(
    `${daemon.url}/admin/policy/audit?server=${server}&tool=${tool}&limit=1000`,
    { headers: { authorization: `Bearer ${OPERATOR}` } },
  );
  assert.equal(response.status, 200);
  const body = await response.json();
  return body.records;
}

/** Runs `attempt` and returns the audit records of `<server>.<tool>` it added. */
async function recordsOf(
  daemon: Daemon,
  target: [server: string, tool: string],
  attempt: () => Promise<void>,
): Promise<AuditRecord[]> {
  const before = (await audit(daemon, ...target)).length;
  await attempt();
  // Oldest first: what the attempt added is past the earlier count.
  return (await audit(daemon, ...target)).slice(before);
}

function assertOneDenial(
  records: AuditRecord[],
  expected: { server: string; tool: string; message: string },
): void {
  assert.equal(
    records.length,
    1,
    `one ${expected.server}.${expected.tool} record, got ${
      JSON.stringify(records)
    }`,
  );
  const [record] = records;
  assert.equal(record.caller, "agent:alice");
  assert.equal(record.decision, "denied");
  assert.equal(record.outcome, "refused");
  assert.equal(record.args.message, expected.message);
}

Deno.test({
  name:
    "security: an agent reaches an external upstream's denied tool by no way of the gateway; each try is audited once as <upstream>.<tool>",
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
            everything: { command: "node", args: [EVERYTHING, "stdio"] },
          },
          // The process environment holds the daemon's secrets.
          tool_overrides: { "everything__get-env": { hidden: true } },
        },
        agents: { default_model: "openai/default-model", max_steps: 3 },
        policy: {
          rules: [
            {
              id: "no-echo-for-agents",
              caller: "agent",
              server: "everything",
              tool: "echo",
              decision: "deny",
            },
            {
              id: "alice-no-memory-writes",
              agent: "alice",
              server: "memory",
              tool: "store_memory",
              decision: "deny",
            },
            {
              id: "alice-sums",
              agent: "alice",
              server: "everything",
              tool: "get-sum",
              decision: "allow",
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
    try {
      await using operator = await connect(daemon, OPERATOR);
      await waitFor(
        async () => (await operator.listTools()).tools.map((t) => t.name),
        (names) => names.includes("everything__echo"),
        30_000,
      );
      await using alice = await connect(daemon, ALICE);
      const echo = ["everything", "echo"] as const;

      await t.step("direct gateway name", async () => {
        let result: CallToolResult | undefined;
        const records = await recordsOf(daemon, [...echo], async () => {
          result = await call(alice, "everything__echo", { message: "direct" });
        });
        assert.equal(result?.isError, true);
        assert.match(textOf(result ?? { content: [] }), /no-echo-for-agents/);
        assertOneDenial(records, { ...named(echo), message: "direct" });
      });

      await t.step("route_tool_call", async () => {
        let result: CallToolResult | undefined;
        const records = await recordsOf(daemon, [...echo], async () => {
          result = await call(alice, "route_tool_call", {
            server: "everything",
            tool: "echo",
            args: { message: "routed" },
          });
        });
        assert.equal(result?.isError, true, JSON.stringify(result));
        assert.doesNotMatch(
          textOf(result ?? { content: [] }),
          /Echo: routed/,
        );
        assertOneDenial(records, { ...named(echo), message: "routed" });
      });

      await t.step(
        "a hidden tool is neither routed nor broadcast",
        async () => {
          const routed = await call(alice, "route_tool_call", {
            server: "everything",
            tool: "get-env",
            args: {},
          });
          assert.equal(routed.isError, true, JSON.stringify(routed));
          assert.match(textOf(routed), /tool_overrides hide it/);
          const broadcast = await call(alice, "broadcast_tool_call", {
            tool: "get-env",
            args: {},
          });
          assert.equal(broadcast.isError, true, JSON.stringify(broadcast));
          assert.doesNotMatch(textOf(broadcast), /AGENTD_TOKEN/);
          assert.match(textOf(broadcast), /No upstream has a tool "get-env"/);
        },
      );

      await t.step("broadcast_tool_call reports the refusal", async () => {
        let result: CallToolResult | undefined;
        const records = await recordsOf(daemon, [...echo], async () => {
          result = await call(alice, "broadcast_tool_call", {
            tool: "echo",
            args: { message: "broadcast" },
          });
        });
        const body = result?.structuredContent;
        assert.ok(body, JSON.stringify(result));
        const results = Reflect.get(body, "results");
        assert.ok(Array.isArray(results));
        const everything = results.find((entry) =>
          Reflect.get(entry, "server") === "everything"
        );
        assert.equal(
          Reflect.get(everything, "status"),
          "refused",
          JSON.stringify(body),
        );
        assert.doesNotMatch(JSON.stringify(body), /Echo: broadcast/);
        assertOneDenial(records, { ...named(echo), message: "broadcast" });
      });

      await t.step("call_tool in all mode", async () => {
        let result: CallToolResult | undefined;
        const records = await recordsOf(daemon, [...echo], async () => {
          result = await call(alice, "call_tool", {
            name: "everything__echo",
            arguments: { message: "meta-all" },
          });
        });
        assert.equal(result?.isError, true, JSON.stringify(result));
        assertOneDenial(records, { ...named(echo), message: "meta-all" });
      });

      await t.step("call_tool on demand", async () => {
        await using onDemand = await connect(
          daemon,
          ALICE,
          "?tools=on_demand",
        );
        const listed = (await onDemand.listTools()).tools.map((t) => t.name);
        assert.ok(listed.includes("call_tool"), listed.join(","));
        let result: CallToolResult | undefined;
        const records = await recordsOf(daemon, [...echo], async () => {
          result = await call(onDemand, "call_tool", {
            name: "everything__echo",
            arguments: { message: "on-demand" },
          });
        });
        assert.equal(result?.isError, true, JSON.stringify(result));
        assertOneDenial(records, { ...named(echo), message: "on-demand" });
      });

      await t.step("an agent's turn on /v1", async () => {
        const created = await fetch(`${daemon.url}/v1/agents`, {
          method: "POST",
          headers: {
            authorization: `Bearer ${OPERATOR}`,
            "content-type": "application/json",
          },
          body: JSON.stringify({ name: "alice", tools: ["everything__echo"] }),
        });
        assert.equal(created.status, 201, await created.text());
        model.script([
          {
            tool_calls: [{
              name: "everything__echo",
              arguments: { message: "agent-turn" },
            }],
          },
          { text: "done" },
        ]);
        const records = await recordsOf(daemon, [...echo], async () => {
          const sent = await fetch(`${daemon.url}/v1/agents/alice/send`, {
            method: "POST",
            headers: {
              authorization: `Bearer ${ALICE}`,
              "content-type": "application/json",
            },
            body: JSON.stringify({ message: "echo it" }),
          });
          const text = await sent.text();
          assert.equal(sent.status, 200, text);
          assert.doesNotMatch(text, /Echo: agent-turn/);
        });
        assertOneDenial(records, { ...named(echo), message: "agent-turn" });
      });

      await t.step(
        "route_tool_call to a built-in server keeps the caller",
        async () => {
          let result: CallToolResult | undefined;
          const records = await recordsOf(
            daemon,
            ["memory", "store_memory"],
            async () => {
              result = await call(alice, "route_tool_call", {
                server: "memory",
                tool: "store_memory",
                args: { namespace: "alice", key: "k", value: "v" },
              });
            },
          );
          assert.equal(result?.isError, true, JSON.stringify(result));
          assert.match(textOf(result ?? { content: [] }), /alice-no-memory/);
          assert.equal(records.length, 1, JSON.stringify(records));
          assert.equal(records[0].caller, "agent:alice");
          assert.equal(records[0].decision, "denied");
        },
      );

      await t.step(
        "an allowed route_tool_call leaves one record of its target",
        async () => {
          let result: CallToolResult | undefined;
          const records = await recordsOf(
            daemon,
            ["everything", "get-sum"],
            async () => {
              result = await call(alice, "route_tool_call", {
                server: "everything",
                tool: "get-sum",
                args: { a: 2, b: 3 },
              });
            },
          );
          assert.notEqual(result?.isError, true, JSON.stringify(result));
          assert.match(textOf(result ?? { content: [] }), /5/);
          assert.equal(records.length, 1, JSON.stringify(records));
          assert.equal(records[0].caller, "agent:alice");
          assert.equal(records[0].decision, "allowed");
          assert.equal(records[0].outcome, "ok");
          assert.deepEqual(records[0].args, { a: 2, b: 3 });
          // The direct name also leaves exactly one (judged once, not twice).
          const direct = await recordsOf(
            daemon,
            ["everything", "get-sum"],
            async () => {
              const answer = await call(alice, "everything__get-sum", {
                a: 1,
                b: 1,
              });
              assert.notEqual(answer.isError, true, textOf(answer));
            },
          );
          assert.equal(direct.length, 1, JSON.stringify(direct));
        },
      );
    } finally {
      await daemon.stop();
    }
  },
});

function named(target: readonly [string, string]) {
  return { server: target[0], tool: target[1] };
}

Deno.test({
  name:
    "security: list_servers and /admin show an agent no command line; register_server refuses link-local targets and echoes no probed body",
  sanitizeResources: false,
  async fn(t) {
    await using dir = await tempDir();
    const config = join(dir.path, "agentd.json");
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        token: OPERATOR,
        agent_tokens: { alice: ALICE },
        servers: ["gateway"],
        gateway: {
          connect_timeout_ms: 3_000,
          upstreams: {
            everything: { command: "node", args: [EVERYTHING, "stdio"] },
          },
        },
        // Agents are asked before registering by default; this operator
        // lifted it for alice, whose probe must still learn nothing.
        policy: {
          rules: [{
            agent: "alice",
            capability: "upstreams",
            decision: "allow",
          }],
        },
      }),
    );
    const internal = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      () => new Response(`<html>${BODY_SECRET}</html>`, { status: 404 }),
    );
    const daemon = await spawnServe(join(dir.path, "data"), {
      extra: ["--config", config],
      env: { AGENTD_TOKEN: OPERATOR },
    });
    try {
      await using operator = await connect(daemon, OPERATOR);
      await using alice = await connect(daemon, ALICE);
      const servers = async (client: Client) => {
        const result = await call(client, "list_servers", {});
        return JSON.stringify(result);
      };
      await waitFor(
        () => servers(operator),
        (text) => text.includes("everything__echo"),
        30_000,
      );

      await t.step("list_servers", async () => {
        assert.ok((await servers(operator)).includes(EVERYTHING));
        const seen = await servers(alice);
        assert.ok(seen.includes("everything__echo"), "agents see tools");
        assert.ok(!seen.includes(EVERYTHING), seen);
        const health = JSON.stringify(
          await call(alice, "get_server_health", { name: "everything" }),
        );
        assert.ok(!health.includes(EVERYTHING), health);
      });

      await t.step("/admin", async () => {
        const page = (token: string) =>
          fetch(`${daemon.url}/admin?format=json`, {
            headers: { authorization: `Bearer ${token}` },
          }).then((response) => response.text());
        assert.ok((await page(OPERATOR)).includes(EVERYTHING));
        const seen = await page(ALICE);
        assert.ok(seen.includes("everything"), seen.slice(0, 300));
        assert.ok(!seen.includes(EVERYTHING), "no command line for an agent");
      });

      await t.step("register_server: link-local targets", async () => {
        for (
          const url of [
            "http://169.254.169.254/mcp",
            "http://[::ffff:169.254.169.254]/latest",
            "http://[fe80::1]:8080/mcp",
          ]
        ) {
          const result = await call(operator, "register_server", {
            name: "metadata",
            url,
          });
          assert.equal(result.isError, true, url);
          assert.match(textOf(result), /link-local/, url);
        }
      });

      await t.step("register_server: a probed body is not echoed", async () => {
        const result = await call(alice, "register_server", {
          name: "probe",
          url: `http://127.0.0.1:${internal.addr.port}/internal`,
        });
        assert.equal(result.isError, true);
        assert.match(textOf(result), /HTTP 404/);
        assert.ok(!textOf(result).includes(BODY_SECRET), textOf(result));
      });
    } finally {
      await daemon.stop();
      await internal.shutdown();
    }
  },
});
