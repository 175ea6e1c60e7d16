// Every in-page tool end to end: Debian Chromium (headless=new) with the
// freshly built extension, the native host registered in its profile, a
// daemon spawned by the test; through /mcp/in-page and the gateway.

import assert from "node:assert/strict";
import { browserTestIgnore } from "../../browser.ts";
import { Client } from "../../../platform/mcp_sdk.ts";
import { fixtureStdio, waitFor } from "../../helpers.ts";
import {
  callTool,
  EXTENSION_ID,
  extensionConnected,
  ok,
  type Stack,
  startStack,
} from "./harness.ts";

const SEED_TOOLS = [
  "get_dom",
  "execute_js",
  "get_page_state",
  "get_cookies",
  "set_cookies",
  "get_local_storage",
  "get_session_storage",
  "wait_for_element",
  "get_accessibility_tree",
  "intercept_network",
  "fill_form",
  "get_text_content",
];

async function everyTool(
  stack: Stack,
  call: (name: string) => string,
  via: "direct" | "gateway",
) {
  const client = via === "direct" ? stack.client : stack.gateway;
  const use = (name: string, args: Record<string, unknown> = {}) =>
    ok(client, call(name), args);

  // DOM without and with styles.
  const dom = await use("get_dom");
  assert.match(String(dom.html), /<h1 id="title"[^>]*>Hello in-page<\/h1>/);
  assert.doesNotMatch(String(dom.html), /data-computed-style/);
  const styled = await use("get_dom", {
    selector: "#title",
    include_styles: true,
  });
  assert.match(
    String(styled.html),
    /data-computed-style="[^"]*color: rgb\(255, 0, 0\)/,
  );
  assert.match(String(styled.html), /display: block/);

  // A script in the page's own world sees the page's globals.
  const script = await use("execute_js", { script: "window.pageAnswer + 1" });
  assert.equal(script.value, 42);
  const body = await use("execute_js", {
    script: "const t = document.title;\nreturn t.toUpperCase();",
  });
  assert.equal(body.value, "IN-PAGE TEST");
  const big = await use("execute_js", { script: '"x".repeat(50000)' });
  assert.equal(String(big.value).length, 20_000, "bounded by the text budget");
  assert.match(String(big.truncated), /50002 characters/);
  const thrown = await callTool(client, call("execute_js"), {
    script: "throw new Error('boom')",
  });
  assert.equal(thrown.isError, true);
  assert.match(thrown.text, /boom/);

  // Page state, with console output and the tab list.
  const state = await use("get_page_state");
  assert.equal(state.title, "In-page test");
  assert.equal(state.url, `${stack.site.url}/`);
  assert.equal(state.ready_state, "complete");
  assert.ok(Array.isArray(state.console));
  assert.ok(
    state.console.some((entry: { text?: string; level?: string }) =>
      entry.text === "page says hi" && entry.level === "warn"
    ),
    JSON.stringify(state.console),
  );
  assert.ok(Array.isArray(state.tabs) && state.tabs.length >= 1);
  const tabId = state.tab_id;
  assert.equal(typeof tabId, "number");

  // Cookies: set through the extension, read back, and checked with CDP.
  const flavor = via === "direct" ? "chocolate" : "vanilla";
  await use("set_cookies", {
    cookies: [{
      name: `flavor_${via}`,
      value: flavor,
      domain: "127.0.0.1",
      path: "/",
    }],
  });
  const cookies = await use("get_cookies");
  assert.ok(Array.isArray(cookies.cookies));
  const names = cookies.cookies.map((cookie: { name: string; value: string }) =>
    `${cookie.name}=${cookie.value}`
  );
  assert.ok(names.includes(`flavor_${via}=${flavor}`), names.join(", "));
  assert.ok(
    names.includes("session=abc123"),
    "the http-only cookie is listed too",
  );
  const cdpCookies = await stack.page.browser().cookies();
  assert.ok(
    cdpCookies.some((cookie) =>
      cookie.name === `flavor_${via}` && cookie.value === flavor
    ),
    "CDP sees the cookie the extension set",
  );

  // Local and session storage.
  const local = await use("get_local_storage");
  assert.deepEqual(local.entries, { theme: "dark" });
  assert.equal(
    (await use("get_local_storage", { key: "theme" })).value,
    "dark",
  );
  const session = await use("get_session_storage", { key: "visit" });
  assert.equal(session.value, "first");

  // An element that appears late.
  await use("execute_js", {
    script:
      `setTimeout(() => { const e = document.createElement("em"); e.id = "later-${via}"; ` +
      `e.textContent = "late ${via}"; document.body.append(e); }, 400); "scheduled"`,
  });
  const waited = await use("wait_for_element", {
    selector: `#later-${via}`,
    timeout: 5000,
  });
  assert.equal(waited.found, true);
  assert.ok(Number(waited.waited_ms) > 0, "it had to wait");
  const missing = await callTool(client, call("wait_for_element"), {
    selector: "#never",
    timeout: 300,
  });
  assert.equal(missing.isError, true);
  assert.match(missing.text, /#never.*300 ms/);

  // The accessibility tree names the button.
  const tree = await use("get_accessibility_tree");
  assert.match(
    JSON.stringify(tree.tree),
    /"role":"button","name":"Save changes"/,
  );

  // A fetch from the page, intercepted and listed.
  const pattern = `*/api/${via}*`;
  const before = await use("intercept_network", { pattern });
  assert.equal(before.count, 0);
  await use("execute_js", {
    script: `await fetch("/api/${via}?n=1").then((r) => r.json())`,
  });
  const logged = await waitFor(
    () => use("intercept_network", { pattern }),
    (result) =>
      Array.isArray(result.requests) &&
      result.requests.some((request: { status?: number }) =>
        request.status === 200
      ),
  );
  const [request] = Array.isArray(logged.requests) ? logged.requests : [];
  assert.equal(request.url, `${stack.site.url}/api/${via}?n=1`);
  assert.equal(request.method, "GET");

  // A form filled, its value checked in the page.
  const filled = await use("fill_form", {
    selector: "#name",
    value: `Ada ${via}`,
  });
  assert.equal(filled.value, `Ada ${via}`);
  assert.equal(
    await stack.page.evaluate('document.querySelector("#name").value'),
    `Ada ${via}`,
  );
  assert.equal(
    (await use("fill_form", { selector: "#color", value: "Green" })).value,
    "g",
  );
  assert.equal(
    await stack.page.evaluate('document.querySelector("#color").value'),
    "g",
  );

  // Text content, also on a tab named by id.
  const text = await use("get_text_content", {
    selector: "#para",
    tab_id: tabId,
  });
  assert.equal(text.text, "Some bold text.");
  const bad = await callTool(client, call("get_text_content"), {
    selector: "#nothing-here",
  });
  assert.equal(bad.isError, true);
  assert.match(bad.text, /No element matches "#nothing-here"/);
}

Deno.test({
  name:
    "in-page: every tool, navigation, worker restart and daemon restart in real Chromium",
  ignore: browserTestIgnore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    const stack = await startStack();
    try {
      const health = await extensionConnected(stack);
      assert.equal(health.extension_version, "1.0.0");
      assert.equal(health.extension_id, EXTENSION_ID);

      await t.step(
        "the seed's twelve tools are listed, here and in the gateway",
        async () => {
          const direct = (await stack.client.listTools()).tools.map((tool) =>
            tool.name
          );
          assert.deepEqual(direct, SEED_TOOLS);
          const gateway = (await stack.gateway.listTools()).tools.map((tool) =>
            tool.name
          );
          for (const name of SEED_TOOLS) {
            assert.ok(gateway.includes(`in-page__${name}`), name);
          }
        },
      );

      await t.step(
        "every tool through /mcp/in-page",
        () => everyTool(stack, (name) => name, "direct"),
      );
      await t.step(
        "every tool through the gateway",
        () => everyTool(stack, (name) => `in-page__${name}`, "gateway"),
      );

      await t.step("after a navigation the next call works", async () => {
        await stack.page.goto(`${stack.site.url}/second`, {
          waitUntil: "load",
        });
        const text = await ok(stack.client, "get_text_content", {
          selector: "#second",
        });
        assert.equal(text.text, "The second page");
        await stack.page.goto(`${stack.site.url}/`, { waitUntil: "load" });
        assert.equal(
          (await ok(stack.client, "get_page_state")).title,
          "In-page test",
        );
      });

      await t.step(
        "the service worker stopped, then woken: calls work again",
        async () => {
          const target = await stack.browser.waitForTarget((candidate) =>
            candidate.type() === "service_worker" &&
            candidate.url().includes(EXTENSION_ID)
          );
          const worker = await target.worker();
          assert.ok(worker);
          await worker.close();
          await waitFor(
            () => stack.health(),
            (health) => health.extension === "waiting",
          );
          // A page load wakes the worker (its content script says hello), which reconnects.
          await stack.page.reload({ waitUntil: "load" });
          await extensionConnected(stack);
          assert.equal(
            (await ok(stack.client, "get_text_content", { selector: "#title" }))
              .text,
            "Hello in-page",
          );
        },
      );

      await t.step(
        "a tab whose content script is gone gets it re-injected",
        async () => {
          // Loading the extension again orphans the content script of every open tab.
          const before = (await extensionConnected(stack)).connected_since;
          assert.equal(
            await stack.browser.installExtension(stack.extension),
            EXTENSION_ID,
          );
          await waitFor(
            () => stack.health(),
            (health) =>
              health.extension === "connected" &&
              health.connected_since !== before,
          );
          const text = await ok(stack.client, "get_text_content", {
            selector: "#title",
          });
          assert.equal(text.text, "Hello in-page");
          const health = await stack.health();
          assert.match(
            JSON.stringify(health.recent_events),
            /"name":"content_reinjected"/,
          );
        },
      );

      await t.step(
        "the daemon restarted: the extension reconnects by itself",
        async () => {
          await stack.restartDaemon();
          await extensionConnected(stack);
          assert.equal(
            (await ok(stack.client, "get_text_content", { selector: "#title" }))
              .text,
            "Hello in-page",
          );
          const viaGateway = await ok(stack.gateway, "in-page__execute_js", {
            script: "1 + 1",
          });
          assert.equal(viaGateway.value, 2);
        },
      );
      await t.step(
        "page console output reaches the daemon through the background page",
        async () => {
          await ok(stack.client, "execute_js", {
            script: 'console.error("through the background page")',
          });
          const health = await waitFor(
            () => stack.health(),
            (now) =>
              JSON.stringify(now.recent_events).includes(
                "through the background page",
              ),
          );
          assert.match(
            JSON.stringify(health.recent_events),
            /"name":"console","data":\{"tab_id":\d+,"level":"error","text":"through the background page"\}/,
          );
        },
      );

      await t.step(
        "the popup shows the connection and the tabs an agent touched",
        async () => {
          const popup = await stack.browser.newPage();
          try {
            await popup.goto(`chrome-extension://${EXTENSION_ID}/popup.html`, {
              waitUntil: "load",
            });
            await popup.waitForFunction(
              'document.getElementById("daemon").textContent === "connected" && ' +
                'document.getElementById("tabs").textContent.includes("127.0.0.1")',
            );
            assert.equal(
              await popup.evaluate(
                'document.getElementById("host").textContent',
              ),
              "connected",
            );
          } finally {
            await popup.close();
          }
          await stack.page.bringToFront();
        },
      );

      await t.step(
        "alone: `agentd mcp in-page` on stdio serves the same extension",
        async () => {
          await stack.stopDaemon();
          const alone = new Client({ name: "in-page-stdio", version: "1" });
          await alone.connect(
            fixtureStdio([
              "mcp",
              "in-page",
              "--data-dir",
              stack.dataDir,
              "--connect-wait-ms",
              "30000",
            ]),
          );
          try {
            // The call waits (connect_wait_ms) until the host finds the new relay.
            const text = await ok(alone, "get_text_content", {
              selector: "#title",
            });
            assert.equal(text.text, "Hello in-page");
          } finally {
            await alone.close();
          }
        },
      );
    } finally {
      await stack.close();
    }
  },
});
