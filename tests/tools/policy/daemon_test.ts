// Policy in `agentd serve`: a `deny` on a path pattern, `ask` answered by the
// operator over the CLI and HTTP (a client without elicitation), a timeout
// that denies, an ask through the gateway reaching the outer client's
// elicitation, an agent token limited to memory tools, operator-only policy
// changes, and one audit record per call with no secret value in it.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  Client,
  ElicitRequestSchema,
  StreamableHTTPClientTransport,
} from "../../../platform/mcp_sdk.ts";
import { CHROMIUM } from "../../browser.ts";
import { EVERYTHING } from "../gateway/upstreams.ts";
import { startXvfb, xTestIgnore } from "../desktop-control/xvfb.ts";
import {
  freePort,
  runCli,
  spawnServe,
  tempDir,
  textOf,
  waitFor,
} from "../../helpers.ts";

const OPERATOR = "operator-token-0123456789-s3cr3t";
const MEMO = "memo-agent-token-0123456789-s3cr3t";
const FILE_SECRET = "file-content-SECRET-4f1c9e";
const MEMORY_SECRET = "memory-value-SECRET-8b2d7a";

async function connect(
  url: string,
  token: string,
  elicit?: (message: string) => "accept" | "decline",
): Promise<Client> {
  const client = new Client(
    { name: "policy-test", version: "1.0.0" },
    elicit ? { capabilities: { elicitation: { form: {} } } } : {},
  );
  if (elicit) {
    client.setRequestHandler(ElicitRequestSchema, (request) => ({
      action: elicit(request.params.message),
    }));
  }
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

async function approvals(url: string): Promise<Record<string, unknown>[]> {
  const response = await fetch(`${url}/admin/policy/approvals`, {
    headers: { authorization: `Bearer ${OPERATOR}` },
  });
  const body = await response.json();
  return body.approvals;
}

Deno.test({
  name:
    "policy: deny on a path, ask answered by CLI/HTTP or timed out, gateway elicitation, agent limited to memory, audit",
  ignore: xTestIgnore ||
    (CHROMIUM === undefined && Deno.env.get("CI") !== "true"),
  sanitizeResources: false,
  async fn() {
    await using dir = await tempDir();
    const files = join(dir.path, "files");
    await Deno.mkdir(join(files, "secret"), { recursive: true });
    const rules = [
      {
        id: "no-secret-dir",
        server: "desktop-control",
        tool: "file_write",
        args: { path: `${files}/secret/**` },
        decision: "deny",
      },
      {
        id: "ask-writes",
        server: "desktop-control",
        tool: "file_write",
        decision: "ask",
      },
      { id: "memo-memory", agent: "memo", server: "memory", decision: "allow" },
      {
        id: "memo-gateway",
        agent: "memo",
        server: "gateway",
        decision: "allow",
      },
      { id: "memo-only-memory", agent: "memo", decision: "deny" },
    ];
    const config = join(dir.path, "agentd.json");
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        token: OPERATOR,
        agent_tokens: { memo: MEMO },
        servers: ["memory", "browser-automation", "desktop-control", "gateway"],
        "browser-automation": {
          cdp_port: freePort(),
          ...(CHROMIUM ? { executable: CHROMIUM } : {}),
        },
        "desktop-control": { allowed_roots: [files] },
        gateway: {
          upstreams: {
            everything: { command: "node", args: [EVERYTHING, "stdio"] },
          },
        },
        policy: { rules, ask_timeout_ms: 60_000 },
      }),
    );
    const x = await startXvfb();
    const daemon = await spawnServe(join(dir.path, "data"), {
      extra: ["--config", config],
      env: { DISPLAY: x.display },
    }).catch(async (error) => {
      await x.close();
      throw error;
    });
    const clients: Client[] = [];
    try {
      const desktop = await connect(
        `${daemon.url}/mcp/desktop-control`,
        OPERATOR,
      );
      clients.push(desktop);
      const write = (path: string) =>
        desktop.callTool({
          name: "file_write",
          arguments: { path, content: FILE_SECRET },
        });
      let calls = 0;

      // Arguments that fail validation never run, and still leave a record.
      const invalid = await desktop.callTool({
        name: "file_write",
        arguments: {
          path: join(files, "x.txt"),
          content: FILE_SECRET,
          mode: 1,
        },
      });
      calls++;
      assert.equal(invalid.isError, true);

      // deny on a path pattern: refused there, naming the rule; nothing written.
      const refused = await write(join(files, "secret", "a.txt"));
      calls++;
      assert.equal(refused.isError, true);
      assert.match(textOf(refused), /"no-secret-dir"/);
      await assert.rejects(Deno.stat(join(files, "secret", "a.txt")));

      // ask, no elicitation: pending approval, approved with `agentd approve`.
      const waiting = write(join(files, "ok.txt"));
      calls++;
      const [pending] = await waitFor(
        () => approvals(daemon.url),
        (list) => list.some((item) => item.status === "pending"),
      );
      assert.equal(pending.caller, "local");
      assert.equal(pending.server, "desktop-control");
      assert.equal(pending.tool, "file_write");
      assert.deepEqual(pending.args, {
        path: join(files, "ok.txt"),
        content: `<${FILE_SECRET.length} chars>`,
      });
      assert.equal(
        pending.runs,
        `desktop-control.file_write ${
          JSON.stringify({ path: join(files, "ok.txt"), content: FILE_SECRET })
        }`,
        "the operator sees what exactly will run",
      );
      const cli = await runCli(
        ["approve", String(pending.id), "--url", daemon.url],
        { AGENTD_TOKEN: OPERATOR },
      );
      assert.equal(cli.code, 0, cli.stderr);
      const written = await waiting;
      assert.notEqual(written.isError, true, textOf(written));
      assert.equal(await Deno.readTextFile(join(files, "ok.txt")), FILE_SECRET);

      // ask, denied over HTTP by the operator; an agent cannot answer.
      const denied = write(join(files, "no.txt"));
      calls++;
      const [again] = await waitFor(
        () => approvals(daemon.url),
        (list) => list.some((item) => item.status === "pending"),
      );
      const byAgent = await fetch(
        `${daemon.url}/admin/policy/approvals/${again.id}/approve`,
        { method: "POST", headers: { authorization: `Bearer ${MEMO}` } },
      );
      assert.equal(byAgent.status, 403);
      await byAgent.body?.cancel();
      const byOperator = await fetch(
        `${daemon.url}/admin/policy/approvals/${again.id}/deny`,
        { method: "POST", headers: { authorization: `Bearer ${OPERATOR}` } },
      );
      assert.equal(byOperator.status, 200);
      await byOperator.body?.cancel();
      const deniedResult = await denied;
      assert.equal(deniedResult.isError, true);
      assert.match(textOf(deniedResult), /operator \(http\) declined/);
      await assert.rejects(Deno.stat(join(files, "no.txt")));

      // The policy changes at run time by the operator only; a short timeout then denies.
      const put = (token: string) =>
        fetch(`${daemon.url}/admin/policy`, {
          method: "PUT",
          headers: { authorization: `Bearer ${token}` },
          body: JSON.stringify({ rules, ask_timeout_ms: 500 }),
        });
      const agentPut = await put(MEMO);
      assert.equal(agentPut.status, 403);
      await agentPut.body?.cancel();
      const operatorPut = await put(OPERATOR);
      assert.equal(operatorPut.status, 200, await operatorPut.text());
      const timedOut = await write(join(files, "late.txt"));
      calls++;
      assert.equal(timedOut.isError, true);
      assert.match(textOf(timedOut), /"ask-writes".*none came within/);

      // Through the gateway, the ask reaches the outer client's elicitation.
      const seen: string[] = [];
      const gateway = await connect(
        `${daemon.url}/mcp`,
        OPERATOR,
        (message) => {
          seen.push(message);
          return "accept";
        },
      );
      clients.push(gateway);
      const viaGateway = await gateway.callTool({
        name: "desktop-control__file_write",
        arguments: { path: join(files, "gw.txt"), content: FILE_SECRET },
      });
      calls++;
      assert.notEqual(viaGateway.isError, true, textOf(viaGateway));
      assert.equal(seen.length, 1);
      assert.match(seen[0], /desktop-control\.file_write/);

      // An agent limited to memory tools: memory yes, browser no; the operator may browse.
      const memo = await connect(`${daemon.url}/mcp`, MEMO);
      clients.push(memo);
      const stored = await memo.callTool({
        name: "memory__store_memory",
        arguments: { namespace: "memo", key: "k", value: MEMORY_SECRET },
      });
      calls++;
      assert.notEqual(stored.isError, true, textOf(stored));
      const browse = await memo.callTool({
        name: "browser-automation__navigate",
        arguments: { url: "data:text/html,<title>memo</title>" },
      });
      calls++;
      assert.equal(browse.isError, true);
      assert.match(textOf(browse), /"memo-only-memory".*agent:memo/);
      // An external upstream's tools are judged at the gateway: memo may not, the operator may.
      await waitFor(
        async () => (await gateway.listTools()).tools.map((tool) => tool.name),
        (names) => names.includes("everything__echo"),
        30_000,
      );
      const memoEcho = await memo.callTool({
        name: "everything__echo",
        arguments: { message: "from memo" },
      });
      calls++;
      assert.equal(memoEcho.isError, true);
      assert.match(textOf(memoEcho), /"memo-only-memory"/);
      const operatorEcho = await gateway.callTool({
        name: "everything__echo",
        arguments: { message: "from the operator" },
      });
      calls++;
      assert.notEqual(operatorEcho.isError, true, textOf(operatorEcho));
      const operatorBrowse = await gateway.callTool({
        name: "browser-automation__navigate",
        arguments: { url: "data:text/html,<title>operator</title>" },
      });
      calls++;
      assert.notEqual(operatorBrowse.isError, true, textOf(operatorBrowse));

      // One audit record per call, exported as JSON lines, without a secret value.
      const exported = await runCli(["audit", "--url", daemon.url], {
        AGENTD_TOKEN: OPERATOR,
      });
      assert.equal(exported.code, 0, exported.stderr);
      const records = exported.stdout.trim().split("\n").map((line) =>
        JSON.parse(line)
      );
      assert.equal(records.length, calls, exported.stdout);
      assert.deepEqual(
        records.map((record) => [
          record.caller,
          record.server,
          record.tool,
          record.decision,
          record.outcome,
        ]),
        [
          ["local", "desktop-control", "file_write", "invalid", "refused"],
          ["local", "desktop-control", "file_write", "denied", "refused"],
          ["local", "desktop-control", "file_write", "approved", "ok"],
          ["local", "desktop-control", "file_write", "declined", "refused"],
          ["local", "desktop-control", "file_write", "timeout", "refused"],
          ["local", "desktop-control", "file_write", "approved", "ok"],
          ["agent:memo", "memory", "store_memory", "allowed", "ok"],
          ["agent:memo", "browser-automation", "navigate", "denied", "refused"],
          ["agent:memo", "everything", "echo", "denied", "refused"],
          ["local", "everything", "echo", "allowed", "ok"],
          ["local", "browser-automation", "navigate", "allowed", "ok"],
        ],
      );
      assert.equal(records[2].decided_by, "operator (cli)");
      assert.equal(records[5].decided_by, "the user (elicitation)");
      for (const record of records) {
        assert.equal(typeof record.duration_ms, "number");
        assert.match(record.time, /^\d{4}-\d\d-\d\dT/);
      }
      for (const secret of [OPERATOR, MEMO, FILE_SECRET, MEMORY_SECRET]) {
        assert.ok(!exported.stdout.includes(secret), `audit holds ${secret}`);
      }
      const asJson = await fetch(
        `${daemon.url}/admin/policy/audit?caller=agent:memo`,
        { headers: { authorization: `Bearer ${OPERATOR}` } },
      );
      const queried = await asJson.json();
      assert.equal(queried.records.length, 3);
    } finally {
      for (const client of clients) await client.close().catch(() => {});
      await daemon.stop();
      await x.close();
    }
  },
});
