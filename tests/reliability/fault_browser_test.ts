// A seed error move caused for real, mid-call: Chromium is killed (SIGKILL)
// while execute_js waits in the page. The server relaunches the browser and
// the call in flight is answered on the restored tab, saying so (no hang, no
// crash, no bare error); /health shows the restart, the logs say what
// happened, and the next call works.
// (tests/tools/browser-automation/crash_test.ts proves the kill between
// calls and the restored tabs; the other servers' moves are listed in
// RELIABILITY.md with the tests that cause them.)

import assert from "node:assert/strict";
import { browserTestIgnore } from "../browser.ts";
import {
  alive,
  browserOf,
  startHarness,
  textOf,
} from "../tools/browser-automation/harness.ts";
import { startSite } from "../tools/browser-automation/site.ts";
import { waitFor } from "../helpers.ts";

Deno.test({
  name:
    "fault: Chromium killed mid-call: the call is answered on the relaunched browser and says so, /health and the logs show the restart",
  ignore: browserTestIgnore,
  async fn() {
    const site = startSite();
    const browser = await startHarness({
      config: { action_timeout_ms: 60_000 },
    });
    try {
      await browser.ok("navigate", { url: `${site.url}/form` });
      const pid = Number(browserOf(await browser.health()).pid);
      assert.ok(pid > 0);
      const started = performance.now();
      const pending = browser.call("execute_js", {
        script:
          "await new Promise((resolve) => setTimeout(resolve, 2_000)); location.pathname",
      });
      await waitFor(() => browser.host.inFlight.count, (count) => count === 1);
      Deno.kill(pid, "SIGKILL");
      const cut = await pending;
      const elapsed = performance.now() - started;
      assert.ok(!cut.isError, textOf(cut));
      assert.equal(cut.structuredContent?.result, "/form");
      assert.match(
        textOf(cut),
        /The browser restarted after it went away; this tab was reopened at/,
      );
      assert.ok(elapsed < 30_000, `the cut call took ${elapsed} ms`);

      const where = await browser.call("execute_js", {
        script: "location.pathname",
      });
      assert.ok(!where.isError, textOf(where));
      assert.equal(where.structuredContent?.result, "/form");
      const after = browserOf(await browser.health());
      assert.equal(after.state, "connected");
      assert.equal(after.restarts, 1);
      assert.notEqual(after.pid, pid);
      const events = browser.logs.map((line) => line.event);
      for (const event of ["browser_disconnected", "browser_restarted"]) {
        assert.ok(events.includes(event), `${event} logged`);
      }
      assert.equal(await alive(pid), false);
    } finally {
      await browser.close();
      await site.close();
    }
  },
});
