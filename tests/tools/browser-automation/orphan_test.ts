// A daemon killed with SIGKILL leaves the browser it launched running. The
// next daemon on the same profile adopts that browser (the very process, told
// by its pid over CDP) as launched: its tabs are still there, and its own
// shutdown closes it, so no Chromium outlives the daemons.

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../../platform/mcp_sdk.ts";
import {
  browserTestIgnore,
  CHROMIUM,
  killProcessesUsing,
} from "../../browser.ts";
import { freePort, spawnServe, tempDir } from "../../helpers.ts";
import {
  alive,
  browserOf,
  callTool,
  startHarness,
  textOf,
  waitNoBrowser,
} from "./harness.ts";
import { startSite } from "./site.ts";

Deno.test({
  name:
    "browser automation: the browser of a daemon killed with SIGKILL is adopted by the next one and closed at its shutdown",
  ignore: browserTestIgnore,
  async fn() {
    await using dir = await tempDir();
    const site = startSite();
    const cdpPort = freePort();
    const config = join(dir.path, "agentd.json");
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        servers: ["browser-automation"],
        "browser-automation": {
          cdp_port: cdpPort,
          headless: true,
          ...(CHROMIUM ? { executable: CHROMIUM } : {}),
        },
      }),
    );
    const data = join(dir.path, "data");
    const daemon = await spawnServe(data, { extra: ["--config", config] });
    try {
      const client = new Client({ name: "orphan-test", version: "1.0.0" });
      await client.connect(
        new StreamableHTTPClientTransport(
          new URL(`${daemon.url}/mcp/browser-automation`),
        ),
      );
      const opened = await callTool(client, "navigate", {
        url: `${site.url}/form`,
      });
      assert.ok(!opened.isError, textOf(opened));
      const health = await (await fetch(`${daemon.url}/health`)).json();
      const launched = health.servers["browser-automation"].details.browser;
      assert.equal(launched.mode, "launched");
      const pid = Number(launched.pid);
      const profile = String(launched.profile_dir);
      await client.close().catch(() => {});
      await daemon.stop("SIGKILL");
      assert.ok(await alive(pid), "the browser outlives its daemon");

      // The next daemon on that profile: <data dir>/profiles/<name>.
      const next = await startHarness({
        dataDir: dirname(dirname(profile)),
        cdpPort,
        config: { headless: true },
      });
      try {
        const where = await next.ok("execute_js", {
          script: "location.pathname",
        });
        assert.equal(where.result, "/form", "the orphan's tab is still there");
        const adopted = browserOf(await next.health());
        assert.equal(adopted.mode, "launched");
        assert.equal(adopted.pid, pid);
        assert.ok(
          next.logs.some((line) =>
            line.event === "browser_adopted" && line.pid === pid
          ),
        );
      } finally {
        await next.close();
      }
      await waitNoBrowser(data);
      assert.equal(await alive(pid), false, "closed at the shutdown");
    } finally {
      await daemon.stop();
      await killProcessesUsing(data);
      await site.close();
    }
  },
});
