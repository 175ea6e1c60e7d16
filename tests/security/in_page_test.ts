// Issue 33 row 4: the daemon's own origin is never readable through in-page
// tools. The operator has logged in to the dashboard in the browser the
// extension lives in; its session cookie (HttpOnly, on 127.0.0.1) must not
// reach any tool caller, a tab on the daemon's origin must not be read or
// scripted (a same-origin fetch there carries the cookie), and the cookie
// must not be set. Real daemon, real Chromium with the companion extension.
// The caller is the operator's own token: the rule holds for every caller,
// so it does not depend on who is asked before cookie tools run.

import assert from "node:assert/strict";
import { browserTestIgnore } from "../browser.ts";
import { waitFor } from "../helpers.ts";
import {
  callTool,
  extensionConnected,
  ok,
  startStack,
} from "../tools/in-page/harness.ts";

const OPERATOR = "operator-token-0123456789abcdef";
const AGENT = "alice-token-0123456789abcdef";

Deno.test({
  name:
    "security: in-page tools never read, script or set the daemon's own origin and session cookie",
  ignore: browserTestIgnore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const stack = await startStack({
      env: {
        AGENTD_TOKEN: OPERATOR,
        AGENTD_AGENT_TOKENS: JSON.stringify({ alice: AGENT }),
      },
      token: OPERATOR,
    });
    try {
      await extensionConnected(stack, 30_000);
      const daemonUrl = stack.daemon.url;

      // The operator logs in to the dashboard in this browser.
      const codes = await fetch(`${daemonUrl}/dashboard/login-codes`, {
        method: "POST",
        headers: { authorization: `Bearer ${OPERATOR}` },
      });
      assert.equal(codes.status, 201, await codes.clone().text());
      const { login_path } = await codes.json();
      const dashboard = await stack.browser.newPage();
      await dashboard.goto(`${daemonUrl}${login_path}`, { waitUntil: "load" });
      const cookies = await stack.browser.cookies();
      const session = cookies.find((cookie) =>
        cookie.name === "agentd_session"
      );
      assert.ok(session, "the browser holds the dashboard session");
      // A daemon page without a CSP (JSON), where a script could fetch.
      await dashboard.goto(`${daemonUrl}/health`, { waitUntil: "load" });

      // 1. get_cookies of the daemon's host: the session is not listed; the
      //    test site's HttpOnly cookie on the same host (another port) is.
      const listed = await ok(stack.client, "get_cookies", {
        domain: "127.0.0.1",
      });
      const names = Array.isArray(listed.cookies)
        ? listed.cookies.map((cookie) =>
          typeof cookie === "object" && cookie !== null && "name" in cookie
            ? String(cookie.name)
            : ""
        )
        : [];
      assert.ok(
        names.includes("session"),
        `other HttpOnly cookies stay listed: ${names}`,
      );
      assert.ok(
        !names.includes("agentd_session"),
        "the daemon's session cookie is never returned",
      );
      assert.ok(!JSON.stringify(listed).includes(session.value));

      // The tab on the daemon's origin, as the agent finds it.
      const state = await ok(stack.client, "get_page_state", {});
      const tabs = Array.isArray(state.tabs) ? state.tabs : [];
      const daemonTab = tabs.find((tab) =>
        typeof tab === "object" && tab !== null && "url" in tab &&
        String(tab.url).startsWith(daemonUrl)
      );
      assert.ok(
        typeof daemonTab === "object" && daemonTab !== null &&
          "tab_id" in daemonTab && typeof daemonTab.tab_id === "number",
        `the daemon's tab is listed: ${JSON.stringify(tabs)}`,
      );
      const tab_id = daemonTab.tab_id;

      // 2. A script there would act as the operator (same-origin fetch with
      //    the cookie): refused before it runs.
      const script = await callTool(stack.client, "execute_js", {
        tab_id,
        script:
          "(await fetch('/dashboard/login-codes', { method: 'POST' })).status",
      });
      assert.equal(script.isError, true, script.text);
      assert.match(script.text, /agentd's own page/);

      // 3. Reading the page, its storage, its accessibility tree: refused.
      for (
        const [tool, args] of [
          ["get_text_content", { selector: "body" }],
          ["get_dom", {}],
          ["wait_for_element", { selector: "body", timeout: 100 }],
          ["fill_form", { selector: "body", value: "x" }],
          ["get_local_storage", {}],
          ["get_session_storage", {}],
          ["get_accessibility_tree", {}],
        ] as const
      ) {
        const result = await callTool(stack.client, tool, { ...args, tab_id });
        assert.equal(result.isError, true, `${tool}: ${result.text}`);
        assert.match(result.text, /agentd's own page/, tool);
      }
      // get_page_state says so, and still lists the tabs.
      const refusedState = await ok(stack.client, "get_page_state", { tab_id });
      assert.match(String(refusedState.refused), /agentd's own page/);
      assert.ok(Array.isArray(refusedState.tabs));

      // 4. Setting the session cookie (fixation or logout): refused, nothing set.
      const set = await callTool(stack.client, "set_cookies", {
        cookies: [{
          name: "agentd_session",
          value: "chosen-by-the-agent",
          domain: "localhost",
        }],
      });
      assert.equal(set.isError, true, set.text);
      assert.match(set.text, /agentd's own session cookie/);
      const after = await stack.browser.cookies();
      assert.ok(
        !after.some((cookie) => cookie.value === "chosen-by-the-agent"),
      );

      // The operator's session still works, and tools still act on other pages.
      await waitFor(
        () =>
          dashboard.evaluate(
            "fetch('/health').then((r) => r.status)",
          ),
        (status) => status === 200,
      );
      const siteTab = tabs.find((tab) =>
        typeof tab === "object" && tab !== null && "url" in tab &&
        String(tab.url).startsWith(stack.site.url)
      );
      assert.ok(
        typeof siteTab === "object" && siteTab !== null && "tab_id" in siteTab,
      );
      assert.equal(
        (await ok(stack.client, "get_text_content", {
          selector: "#title",
          tab_id: siteTab.tab_id,
        })).text,
        "Hello in-page",
      );
    } finally {
      await stack.close();
    }
  },
});
