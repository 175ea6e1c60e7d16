// The real CLI: `agentd mcp browser-automation` over streamable HTTP (two
// sessions, two tabs, /health and /metrics) and over stdio, each launching
// Chromium at start (the seed's Start phase) and leaving no browser behind
// when it exits; inside `agentd serve` the launch waits for the first call.

import assert from "node:assert/strict";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../../platform/mcp_sdk.ts";
import { browserTestIgnore } from "../../browser.ts";
import {
  assertRunningExceptDisplay,
  fixtureStdio,
  freePort,
  spawnDaemon,
  spawnServe,
  tempDir,
} from "../../helpers.ts";
import {
  callTool,
  imagesOf,
  pngSize,
  textOf,
  waitNoBrowser,
} from "./harness.ts";
import { startSite } from "./site.ts";

async function httpClient(url: string, path = "/mcp"): Promise<{
  client: Client;
  close(): Promise<void>;
}> {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}${path}`));
  const client = new Client({ name: "browser-http", version: "1.0.0" });
  await client.connect(transport);
  return {
    client,
    async close() {
      await transport.terminateSession();
      await client.close();
    },
  };
}

Deno.test({
  name:
    "browser automation CLI over HTTP: browser up at start, a tab per session, calls serialised per tab, /health, clean exit",
  ignore: browserTestIgnore,
  async fn() {
    const site = startSite();
    await using dir = await tempDir();
    const daemon = await spawnDaemon([
      "mcp",
      "browser-automation",
      "--port",
      "0",
      "--cdp-port",
      String(freePort()),
      "--data-dir",
      dir.path,
    ]);
    try {
      // Alone, the server launched its browser in its Start phase: it runs
      // before any tool call.
      const idle = await (await fetch(`${daemon.url}/health`)).json();
      assert.equal(idle.status, "ok");
      const server = idle.servers["browser-automation"];
      assert.equal(server.details.browser.state, "connected");
      assert.equal(server.details.browser.mode, "launched");
      assert.equal(server.details.launch, "on_start");

      const alice = await httpClient(daemon.url);
      const bob = await httpClient(daemon.url);
      try {
        const a = await callTool(alice.client, "navigate", {
          url: `${site.url}/form`,
        });
        assert.ok(!a.isError, textOf(a));
        const b = await callTool(bob.client, "navigate", {
          url: `${site.url}/`,
        });
        assert.ok(!b.isError, textOf(b));
        // Bob's navigation did not move Alice's tab.
        const mine = await callTool(alice.client, "execute_js", {
          script: "location.pathname",
        });
        assert.equal(mine.structuredContent?.result, "/form");

        // Calls of one session run one at a time: the second waits for the first.
        const [slow, next] = await Promise.all([
          callTool(alice.client, "execute_js", {
            script:
              "await new Promise((resolve) => setTimeout(resolve, 300)); window.mark = 'first'; 1",
          }),
          callTool(alice.client, "execute_js", {
            script: "window.mark ?? 'not yet'",
          }),
        ]);
        assert.equal(slow.structuredContent?.result, 1);
        assert.equal(next.structuredContent?.result, "first");

        const shot = await callTool(bob.client, "screenshot", {});
        assert.deepEqual(pngSize(imagesOf(shot)[0]), {
          width: 1280,
          height: 800,
        });

        const health = await (await fetch(`${daemon.url}/health`)).json();
        const details = health.servers["browser-automation"].details;
        assert.equal(details.browser.state, "connected");
        assert.equal(details.browser.mode, "launched");
        assert.equal(details.browser.pages, 2);
        assert.equal(details.browser.sessions, 2);
        assert.ok(details.page_loads.count >= 2);
        const metrics = await (await fetch(`${daemon.url}/metrics`)).text();
        assert.match(metrics, /agentd_browser_connected 1/);
        assert.match(metrics, /agentd_browser_restarts_total 0/);
        assert.match(
          metrics,
          /agentd_tool_calls_total\{server="browser-automation",tool="navigate"\} 2/,
        );
      } finally {
        await alice.close();
        await bob.close();
      }
      assert.equal((await daemon.stop()).code, 0);
      await waitNoBrowser(dir.path);
      const events = daemon.logs.map((line) => line.event);
      assert.ok(events.includes("browser_ready"));
      assert.ok(events.includes("browser_closed"));
      assert.ok(
        daemon.logs.some((line) =>
          line.event === "browser_action" && line.tool === "navigate" &&
          typeof line.duration_ms === "number"
        ),
      );
      assert.deepEqual(daemon.stray, []);
    } finally {
      await daemon.stop();
      await site.close();
    }
  },
});

Deno.test({
  name:
    "browser automation CLI over stdio: navigate and screenshot, no browser left after exit",
  ignore: browserTestIgnore,
  async fn() {
    const site = startSite();
    await using dir = await tempDir();
    const transport = fixtureStdio(
      [
        "mcp",
        "browser-automation",
        "--cdp-port",
        String(freePort()),
        "--data-dir",
        dir.path,
      ],
      {
        NO_COLOR: "1",
        PATH: Deno.env.get("PATH") ?? "",
        HOME: Deno.env.get("HOME") ?? dir.path,
      },
    );
    const client = new Client({ name: "browser-stdio", version: "1.0.0" });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      // The seed's fourteen, plus snapshot (issue 23).
      assert.equal(tools.length, 15);
      const opened = await callTool(client, "navigate", {
        url: `${site.url}/`,
      });
      assert.ok(!opened.isError, textOf(opened));
      assert.equal(opened.structuredContent?.title, "Home");
      const full = await callTool(client, "screenshot", { full_page: true });
      assert.equal(pngSize(imagesOf(full)[0]).width, 1280);
    } finally {
      await client.close();
    }
    await waitNoBrowser(dir.path);
    await site.close();
  },
});

Deno.test({
  name:
    "browser automation in agentd serve: /mcp/browser-automation and through the gateway at /mcp",
  ignore: browserTestIgnore,
  async fn() {
    const site = startSite();
    await using dir = await tempDir();
    const daemon = await spawnServe(dir.path, {
      env: { AGENTD_BROWSER_AUTOMATION__CDP_PORT: String(freePort()) },
    });
    try {
      // Beside other servers it loads on first use: no server, no browser until a call.
      const idle = await (await fetch(`${daemon.url}/health`)).json();
      assert.equal(idle.servers["browser-automation"].phase, "not_loaded");

      const own = await httpClient(daemon.url, "/mcp/browser-automation");
      const gateway = await httpClient(daemon.url, "/mcp");
      try {
        const opened = await callTool(own.client, "navigate", {
          url: `${site.url}/`,
        });
        assert.ok(!opened.isError, textOf(opened));
        const links = await callTool(own.client, "get_links", {});
        assert.equal(links.structuredContent?.count, 3);
        const routed = await callTool(
          gateway.client,
          "browser-automation__execute_js",
          { script: "navigator.userAgent.includes('Chrome')" },
        );
        assert.ok(!routed.isError, textOf(routed));
        assert.equal(routed.structuredContent?.result, true);
        // Two gateway sessions get a tab each, as at /mcp/browser-automation.
        const second = await httpClient(daemon.url, "/mcp");
        try {
          for (
            const [client, path] of [
              [gateway.client, "/form"],
              [second.client, "/tall"],
            ] as const
          ) {
            const went = await callTool(
              client,
              "browser-automation__navigate",
              {
                url: `${site.url}${path}`,
              },
            );
            assert.ok(!went.isError, textOf(went));
          }
          for (
            const [client, path] of [
              [gateway.client, "/form"],
              [second.client, "/tall"],
            ] as const
          ) {
            const where = await callTool(
              client,
              "browser-automation__execute_js",
              { script: "location.pathname" },
            );
            assert.equal(where.structuredContent?.result, path);
          }
        } finally {
          await second.close();
        }
        const health = await (await fetch(`${daemon.url}/health`)).json();
        assertRunningExceptDisplay(health);
        assert.equal(
          health.servers["browser-automation"].details.browser.state,
          "connected",
        );
      } finally {
        await own.close();
        await gateway.close();
      }
      assert.equal((await daemon.stop()).code, 0);
      await waitNoBrowser(dir.path);
    } finally {
      await daemon.stop();
      await site.close();
    }
  },
});
