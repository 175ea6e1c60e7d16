// The dashboard's Servers panel in headless Chromium against a real daemon
// running all seven servers (desktop-control in its Error phase: no
// DISPLAY): a phase badge and one summary line per server instead of a raw
// health dump, the Error phase's message in full and in red, the whole health
// object on demand (and still open after a refresh), and health text shown as
// text, never as HTML.

import assert from "node:assert/strict";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../platform/mcp_sdk.ts";
import { browserTestIgnore, launchChromium, saveArtifact } from "../browser.ts";
import { spawnServe, tempDir } from "../helpers.ts";

const TOKEN = "dashboard-servers-token-0123456789abcdef";
const SERVERS = [
  "browser-automation",
  "desktop-control",
  "extension-bridge",
  "gateway",
  "in-page",
  "memory",
  "platform-auth",
];

Deno.test({
  name:
    "dashboard: servers show phase badges and key figures, errors in full, details on demand",
  ignore: browserTestIgnore,
  async fn() {
    await using dir = await tempDir();
    const daemon = await spawnServe(dir.path, {
      env: {
        AGENTD_TOKEN: TOKEN,
        AGENTD_SERVERS: SERVERS.join(","),
        DISPLAY: "", // desktop-control's Error phase
      },
    });
    const client = new Client({ name: "servers-test", version: "1.0.0" });
    try {
      await client.connect(
        new StreamableHTTPClientTransport(
          new URL(`${daemon.url}/mcp/memory`),
          { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } },
        ),
      );
      // `serve` loads a server on its first use: a session with each loads
      // it (desktop-control started with the daemon and failed: no display).
      for (const id of SERVERS) {
        if (["desktop-control", "gateway", "memory"].includes(id)) continue;
        const other = new Client({ name: "servers-test", version: "1.0.0" });
        await other.connect(
          new StreamableHTTPClientTransport(
            new URL(`${daemon.url}/mcp/${id}`),
            { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } },
          ),
        );
        await other.close();
      }
      for (const key of ["sky", "sea", "sand"]) {
        const stored = await client.callTool({
          name: "store_memory",
          arguments: { namespace: "notes", key, value: `The ${key} is blue` },
        });
        assert.ok(!stored.isError, JSON.stringify(stored.content));
      }

      await using browser = await launchChromium();
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on("pageerror", (error) => void problems.push(String(error)));
      await page.setViewport({ width: 1280, height: 900 });
      const login = await fetch(`${daemon.url}/dashboard/login-codes`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      const { login_path } = await login.json();
      await page.goto(`${daemon.url}${login_path}`, { waitUntil: "load" });
      await page.waitForSelector('body[data-loaded="true"]', {
        timeout: 30_000,
      });
      const text = (selector: string) =>
        page.$eval(selector, (node) => node.textContent ?? "");
      // In the page's own words (this file has no DOM types).
      const inPage = async (expression: string) =>
        String(await page.evaluate(expression));
      const q = (selector: string) =>
        `document.querySelector(${JSON.stringify(selector)})`;
      // What a person sees: innerText leaves out hidden rows.
      const seen = (selector: string) => inPage(`${q(selector)}.innerText`);
      const visible = (selector: string) =>
        inPage(`${q(selector)}.checkVisibility()`);
      const row = (id: string) => `#servers tr[data-key="${id}"]`;

      assert.deepEqual(
        (await page.$$eval(
          "#servers tr[data-key]",
          (rows) => rows.map((r) => r.getAttribute("data-key") ?? ""),
        )).sort(),
        SERVERS,
      );
      // The gateway's health checks settle on their own schedule: wait for them.
      await page.waitForFunction(
        `/^5 of 6 upstreams healthy · desktop-control unhealthy · \\d+ tools$/.test(${
          q(`${row("gateway")} td.summary`)
        }?.textContent)`,
        { timeout: 30_000, polling: 100 },
      ).catch(async (error) => {
        throw new Error(`${error}; panel: ${await seen("#servers")}`);
      });

      // A badge per server; its phase reads as a word, its tone as a colour.
      for (const id of SERVERS) {
        const badge = await text(`${row(id)} td.phase .badge`);
        assert.equal(badge, id === "desktop-control" ? "error" : "running");
      }
      assert.ok(await page.$(`${row("memory")} .badge.tone-good`));
      assert.ok(await page.$(`${row("desktop-control")} .badge.tone-bad`));
      assert.equal(
        await text(`${row("memory")} td.phase`),
        "running",
        "an ok server shows its phase alone",
      );
      assert.equal(
        await text(`${row("memory")} td.summary`),
        "3 entries in 1 namespace",
      );
      assert.equal(
        await text(`${row("platform-auth")} td.summary`),
        "no platforms connected",
      );
      assert.match(
        await text(`${row("browser-automation")} td.summary`),
        /^browser not started/,
      );
      assert.match(
        await text(`${row("in-page")} td.summary`),
        /^waiting for the extension/,
      );
      assert.ok(
        await page.$(`${row("in-page")} .badge.tone-quiet`),
        "waiting is quiet, not an alarm",
      );

      // No raw dump in what a person sees.
      const panel = await seen("#servers");
      for (const raw of ["sessions_evicted", "type: tool server", "…", "{"]) {
        assert.ok(!panel.includes(raw), `"${raw}" shown in: ${panel}`);
      }

      // The Error phase: its message whole, right under its row, in red.
      const problem = `${row("desktop-control")} + tr.problem-row .callout`;
      assert.match(
        await seen(problem),
        /^Cannot start desktop-control: DISPLAY is not set: there is no X display to control\.\nRun agentd inside a desktop session/,
      );
      assert.equal(
        await inPage(`getComputedStyle(${q(`${problem} strong`)}).color`),
        "rgb(220, 38, 38)",
      );

      // Details on demand, by keyboard: the whole health object, readable.
      const details = `${row("memory")} + tr.details-row`;
      const toggle = `${row("memory")} button.toggle`;
      assert.equal(await visible(details), "false");
      await page.focus(toggle);
      await page.keyboard.press("Enter");
      await page.waitForFunction(`${q(details)}.checkVisibility()`, {
        timeout: 5_000,
      });
      assert.equal(
        await page.$eval(toggle, (node) => node.getAttribute("aria-expanded")),
        "true",
      );
      const health = await seen(`${details} .health`);
      assert.match(health, /^phase: running$/m);
      assert.match(health, /^sessions_evicted: 0$/m);
      assert.match(health, /^entries_per_namespace:\n {2}notes: 3$/m);

      // A refresh rebuilds the panel; what was open stays open, focus stays.
      const before = await text("#status");
      await page.waitForFunction(
        `${q("#status")}.textContent !== ${JSON.stringify(before)}`,
        { timeout: 15_000, polling: 100 },
      );
      assert.equal(await visible(details), "true");
      assert.equal(
        await inPage(`document.activeElement.getAttribute("data-toggle")`),
        "memory",
      );
      await saveArtifact(
        "dashboard_servers.png",
        await page.screenshot({ fullPage: true }),
      );
      const panelNode = await page.$("#servers");
      assert.ok(panelNode);
      await saveArtifact(
        "dashboard_servers_panel.png",
        await panelNode.screenshot(),
      );
      await page.keyboard.press("Enter");
      await page.waitForFunction(`!${q(details)}.checkVisibility()`, {
        timeout: 5_000,
      });

      // Health text is shown as text: an upstream's name or an error that
      // looks like HTML stays inert.
      const trap = '<img src=x onerror="window.__owned=1">';
      await page.setRequestInterception(true);
      page.on("request", (request) => {
        if (new URL(request.url()).pathname !== "/health") {
          void request.continue();
          return;
        }
        void request.respond({
          status: 200,
          contentType: "application/json",
          body: JSON.stringify({
            status: "degraded",
            version: "0.1.0",
            uptime_s: 5,
            servers: {
              [`evil${trap}`]: {
                phase: "error",
                calls: 0,
                errors: 0,
                error: `Cannot start: ${trap}. Fix ${trap}`,
              },
              gateway: {
                phase: "running",
                calls: 1,
                errors: 0,
                details: { status: "degraded", summary: `0 of 1 ${trap}` },
              },
            },
          }),
        });
      });
      await page.waitForFunction(
        `document.querySelectorAll("#servers tr[data-key]").length === 2`,
        { timeout: 15_000, polling: 100 },
      );
      assert.match(await seen("#servers"), /0 of 1 <img src=x/);
      assert.match(await seen("#servers"), /Cannot start: <img src=x/);
      assert.equal(await page.$$eval("#servers img", (n) => n.length), 0);
      assert.equal(await page.evaluate("window.__owned"), undefined);
      assert.deepEqual(problems, []);
    } finally {
      await client.close();
      await daemon.stop();
    }
  },
});
