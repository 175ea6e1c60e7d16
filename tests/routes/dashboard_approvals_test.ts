// The dashboard's Approvals and Audit panels in headless Chromium against a
// real daemon: an agent's memory call under an `ask` rule (its client has no
// elicitation) waits in the Approvals panel with the tool and arguments;
// Approve once (by keyboard) completes it, Deny returns a clear denial,
// Approve for session lets the next call through; the Audit panel lists them
// with their decisions and filters by server.tool; no token reaches a URL or
// the page, and a cookie session cannot answer from another origin.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../platform/mcp_sdk.ts";
import { browserTestIgnore, launchChromium } from "../browser.ts";
import { spawnServe, tempDir, textOf } from "../helpers.ts";

const OPERATOR = "dashboard-approvals-operator-0123456789";
const MEMO = "dashboard-approvals-memo-agent-0123456789";
const VALUE = "approved-value-SECRET-5e1d";

Deno.test({
  name:
    "dashboard: pending approvals answered (once, session, deny) from the page; audit listed and filtered",
  ignore: browserTestIgnore,
  async fn() {
    await using dir = await tempDir();
    const config = join(dir.path, "agentd.json");
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        token: OPERATOR,
        agent_tokens: { memo: MEMO },
        servers: ["memory"],
        policy: {
          rules: [{
            id: "ask-memo-stores",
            agent: "memo",
            server: "memory",
            tool: "store_memory",
            decision: "ask",
          }],
          ask_timeout_ms: 60_000,
        },
      }),
    );
    const daemon = await spawnServe(join(dir.path, "data"), {
      extra: ["--config", config],
    });
    // An MCP client without elicitation: the ask waits for the dashboard.
    const memo = new Client({ name: "memo-client", version: "1.0.0" });
    await memo.connect(
      new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp/memory`), {
        requestInit: { headers: { authorization: `Bearer ${MEMO}` } },
      }),
    );
    const store = (key: string) =>
      memo.callTool({
        name: "store_memory",
        arguments: { namespace: "memo", key, value: VALUE },
      });
    try {
      await using browser = await launchChromium();
      const page = await browser.newPage();
      await page.setViewport({ width: 1280, height: 800 });
      const urls: string[] = [];
      page.on("request", (request) => void urls.push(request.url()));
      const login = await fetch(`${daemon.url}/dashboard/login-codes`, {
        method: "POST",
        headers: { authorization: `Bearer ${OPERATOR}` },
      });
      const { login_path } = await login.json();
      await page.goto(`${daemon.url}${login_path}`, { waitUntil: "load" });
      await page.waitForSelector("body[data-loaded]", { timeout: 30_000 });
      assert.match(
        await page.$eval("#approvals", (n) => n.textContent ?? ""),
        /Nothing is waiting for approval/,
      );

      const panel = () => page.$eval("#approvals", (n) => n.textContent ?? "");
      const pendingRow = async (except: string[]) => {
        const seen = JSON.stringify(except);
        const handle = await page.waitForFunction(
          `[...document.querySelectorAll("#approvals-pending tr[data-key]")]
            .map((row) => row.getAttribute("data-key") || "")
            .find((key) => key !== "" && !${seen}.includes(key)) || false`,
          { timeout: 30_000 },
        ).catch(async (error) => {
          throw new Error(`${error}; the panel shows: ${await panel()}`);
        });
        const id = await handle.jsonValue();
        assert.equal(typeof id, "string");
        return String(id);
      };
      const row = (id: string) => `#approvals-pending tr[data-key="${id}"]`;

      // 1. The call waits; the panel names who asks, the tool and the exact call.
      const first = store("k1");
      const firstId = await pendingRow([]);
      const text = await page.$eval(row(firstId), (n) => n.textContent ?? "");
      assert.match(text, /agent:memo/);
      assert.match(text, /memory.*store_memory/);
      assert.ok(
        text.includes(`"key":"k1"`) && text.includes(`"namespace":"memo"`),
        text,
      );
      assert.match(text, /ask-memo-stores/);
      assert.match(text, /\d+ (s|min)/, "age and time left shown");
      assert.match(
        await page.$eval("#approvals-h", (n) => n.textContent ?? ""),
        /1 waiting/,
      );
      // Approve once with the keyboard: focus the button, press Enter.
      await page.focus(`${row(firstId)} button[data-action="approve-once"]`);
      await page.keyboard.press("Enter");
      const firstResult = await first;
      assert.notEqual(firstResult.isError, true, textOf(firstResult));
      assert.match(textOf(firstResult), /"stored": true/);
      await page.waitForFunction(
        `document.querySelector(${JSON.stringify(row(firstId))}) === null`,
        { timeout: 15_000 },
      );
      assert.match(
        await page.$eval(
          `#approvals-answered tr[data-key="${firstId}"]`,
          (n) => n.textContent ?? "",
        ),
        /agent:memo.*memory\.store_memory.*approved.*once.*operator \(dashboard\)/,
      );

      // A dashboard session cannot answer from another origin; agents never.
      const second = store("k2");
      const secondId = await pendingRow([firstId]);
      const cookies = await page.cookies();
      const cookie = cookies.map((c) => `${c.name}=${c.value}`).join("; ");
      const crossSite = await fetch(
        `${daemon.url}/admin/policy/approvals/${secondId}/approve`,
        {
          method: "POST",
          headers: { cookie, origin: "http://evil.example" },
          body: "{}",
        },
      );
      assert.equal(crossSite.status, 403);
      await crossSite.body?.cancel();
      const byAgent = await fetch(`${daemon.url}/admin/policy/approvals`, {
        headers: { authorization: `Bearer ${MEMO}` },
      });
      assert.equal(byAgent.status, 403);
      await byAgent.body?.cancel();

      // 2. Deny: the client gets an isError naming the denial.
      await page.click(`${row(secondId)} button[data-action="deny"]`);
      const secondResult = await second;
      assert.equal(secondResult.isError, true);
      assert.match(
        textOf(secondResult),
        /operator \(dashboard\) declined memory\.store_memory.*"ask-memo-stores"/,
      );
      // The page shows the outcome when its POST answers, which can come after
      // the client's result: wait for it.
      await page.waitForFunction(
        `/Denied: memory\\.store_memory/.test(document.querySelector("#approvals-state")?.textContent ?? "")`,
        { timeout: 15_000, polling: 100 },
      );

      // 3. Approve for session: this call and the session's next one run.
      const third = store("k3");
      const thirdId = await pendingRow([firstId, secondId]);
      await page.click(`${row(thirdId)} button[data-action="approve-session"]`);
      assert.notEqual((await third).isError, true);
      const fourth = await store("k4");
      assert.notEqual(fourth.isError, true, textOf(fourth));

      // The audit panel: every call with its decision, filterable by server.tool.
      await page.waitForFunction(
        `document.querySelectorAll("#audit tr[data-key]").length >= 4`,
        { timeout: 15_000 },
      ).catch(async (error) => {
        throw new Error(
          `${error}; audit: ${await page.$eval(
            "#audit-panel",
            (n) => n.textContent,
          )}`,
        );
      });
      const auditRows = await page.$$eval(
        "#audit tr[data-key]",
        (rows) =>
          rows.map((r) =>
            [...r.children].map((cell) => cell.textContent ?? "").join(" | ")
          ),
      );
      const stores = auditRows.filter((r) => r.includes("store_memory"));
      assert.equal(stores.length, 4, auditRows.join("\n"));
      assert.ok(stores.every((r) => r.includes("agent:memo")));
      assert.equal(
        stores.filter((r) =>
          r.includes("| approved (operator (dashboard)) |") &&
          r.includes("| ok |")
        ).length,
        2,
        stores.join("\n"),
      );
      assert.ok(
        stores.some((r) =>
          r.includes("| declined (operator (dashboard)) |") &&
          r.includes("| refused |")
        ),
      );
      assert.ok(stores.some((r) => r.includes("session grant")));
      assert.ok(stores.every((r) => /\d+ ms/.test(r)), "durations shown");
      assert.ok(
        !auditRows.some((r) => r.includes(VALUE)),
        "the audit keeps no value",
      );
      await page.type("#audit-filter", "nothing.like_this");
      await page.waitForFunction(
        `document.querySelectorAll("#audit tr[data-key]").length === 0 &&
          document.querySelector("#audit").textContent.includes("No call of a tool matching")`,
        { timeout: 5_000 },
      );
      await page.focus("#audit-filter");
      await page.keyboard.down("Control");
      await page.keyboard.press("KeyA");
      await page.keyboard.up("Control");
      await page.keyboard.press("Backspace");
      await page.type("#audit-filter", "memory.store");
      await page.waitForFunction(
        `document.querySelectorAll("#audit tr[data-key]").length === 4`,
        { timeout: 5_000 },
      );

      // Readable at 1280×800 (no sideways scrolling); no token anywhere.
      const width = Number(
        await page.evaluate(
          "document.documentElement.scrollWidth",
        ),
      );
      assert.ok(width <= 1280, `page is ${width}px wide`);
      const html = await page.content();
      for (const token of [OPERATOR, MEMO]) {
        assert.ok(!html.includes(token), "no token in the page");
        assert.ok(!urls.some((url) => url.includes(token)), "no token in URLs");
      }
    } finally {
      await memo.close();
      await daemon.stop();
    }
  },
});
