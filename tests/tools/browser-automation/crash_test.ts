// The seed's error move: the browser process ends (kill -9); the server
// relaunches it, reopens every session's tab at its last URL, and the next
// call succeeds. And the profile outlives the server: cookies persist.

import assert from "node:assert/strict";
import { browserTestIgnore } from "../../browser.ts";
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
    "browser automation: after kill -9 of Chromium the next call works on the restored pages",
  ignore: browserTestIgnore,
  async fn() {
    const site = startSite();
    const browser = await startHarness();
    try {
      await browser.ok("navigate", { url: `${site.url}/form` });
      const other = await browser.connect({ agent: "other" });
      const opened = await callTool(other, "navigate", {
        url: `${site.url}/tall`,
      });
      assert.ok(!opened.isError, textOf(opened));
      const before = browserOf(await browser.health());
      assert.equal(before.pages, 2, "one tab per session");
      const pid = Number(before.pid);
      assert.ok(pid > 0);

      Deno.kill(pid, "SIGKILL");
      // No waiting: the very next call rides out the restart.
      const where = await browser.call("execute_js", {
        script: "location.pathname",
      });
      assert.ok(!where.isError, textOf(where));
      assert.equal(where.structuredContent?.result, "/form");
      assert.match(
        textOf(where),
        new RegExp(
          `Note: The browser restarted after it went away; this tab was reopened at ${site.url}/form`,
        ),
      );
      // The other session's tab came back too, at its own page.
      const theirs = await callTool(other, "get_text", { selector: "#bottom" });
      assert.ok(!theirs.isError, textOf(theirs));
      assert.equal(theirs.structuredContent?.url, `${site.url}/tall`);

      // And the restored page works for real actions.
      await browser.ok("fill_form", {
        fields: [{ selector: "#name", value: "after crash" }],
      });
      await browser.ok("submit_form", { selector: "#signup" });
      assert.equal(site.submissions.at(-1)?.get("name"), "after crash");

      const health = await browser.health();
      const after = browserOf(health);
      assert.equal(after.state, "connected");
      assert.equal(after.mode, "launched");
      assert.equal(after.restarts, 1);
      assert.ok(typeof after.last_restart === "string");
      assert.ok(typeof after.last_disconnect === "string");
      assert.notEqual(after.pid, pid);
      assert.equal(after.pages, 2);
      assert.equal((health.details as { status: string }).status, "ok");
      const events = browser.logs.map((line) => line.event);
      for (
        const event of [
          "browser_disconnected",
          "browser_restarted",
          "browser_session_restored",
        ]
      ) assert.ok(events.includes(event), `${event} logged`);
      assert.equal(await alive(pid), false);
    } finally {
      await browser.close();
      await site.close();
    }
  },
});

Deno.test({
  name:
    "browser automation: the launched browser's profile keeps cookies across runs; shutdown closes it",
  ignore: browserTestIgnore,
  async fn() {
    const site = startSite();
    const dataDir = await Deno.makeTempDir({ prefix: "agentd-profile-" });
    try {
      const first = await startHarness({
        dataDir,
        config: { profile: "work" },
      });
      await first.ok("navigate", { url: `${site.url}/cookies` });
      const pid = Number(browserOf(await first.health()).pid);
      await first.close();
      // Shutdown closed the browser it launched.
      await waitNoBrowser(dataDir);
      assert.equal(await alive(pid), false);

      const second = await startHarness({
        dataDir,
        config: { profile: "work" },
      });
      try {
        const cookies = await second.ok("get_cookies", {
          domain: "127.0.0.1",
        });
        const names = (cookies.cookies as { name: string }[]).map((cookie) =>
          cookie.name
        );
        assert.ok(names.includes("theme"), `persistent cookie in ${names}`);
        const state = browserOf(await second.health());
        assert.match(String(state.profile_dir), /profiles\/work$/);
      } finally {
        await second.close();
      }
      await waitNoBrowser(dataDir);
    } finally {
      await Deno.remove(dataDir, { recursive: true });
      await site.close();
    }
  },
});
