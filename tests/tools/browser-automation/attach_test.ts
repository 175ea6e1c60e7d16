// Attach mode: a browser already listening on the debugging port (started
// here as a user would, on a free port) is used instead of launching one,
// and is still running after the server shuts down. When it goes away the
// server is degraded until a call launches its own.

import assert from "node:assert/strict";
import { join } from "node:path";
import { probeDebuggingPort } from "../../../platform/browser_discovery.ts";
import { browserTestIgnore, CHROMIUM } from "../../browser.ts";
import { freePort, waitFor } from "../../helpers.ts";
import {
  alive,
  browserOf,
  callTool,
  processesWith,
  startHarness,
  textOf,
} from "./harness.ts";
import { startSite } from "./site.ts";

interface UserBrowser {
  pid: number;
  port: number;
  /** The page targets, as /json/list reports them. */
  tabs(): Promise<{ url: string }[]>;
  close(): Promise<void>;
}

/** Chromium started the way README tells users to, on `port`, showing `url`. */
async function startUserBrowser(
  port: number,
  url: string,
): Promise<UserBrowser> {
  if (CHROMIUM === undefined) throw new Error("no Chromium to start");
  const profile = await Deno.makeTempDir({ prefix: "agentd-user-browser-" });
  const child = new Deno.Command(CHROMIUM, {
    args: [
      "--headless=new",
      "--no-sandbox",
      "--no-first-run",
      "--disable-dev-shm-usage",
      `--remote-debugging-port=${port}`,
      `--user-data-dir=${profile}`,
      url,
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  await waitFor(() => probeDebuggingPort(port), (found) => found !== undefined);
  return {
    pid: child.pid,
    port,
    async tabs() {
      const list: { type: string; url: string }[] = await (await fetch(
        `http://127.0.0.1:${port}/json/list`,
      )).json();
      return list.filter((target) => target.type === "page");
    },
    async close() {
      try {
        child.kill("SIGTERM");
      } catch {
        // already gone
      }
      await child.status;
      await waitFor(() => processesWith(profile), (pids) => pids.length === 0);
      await Deno.remove(profile, { recursive: true });
    },
  };
}

Deno.test({
  name:
    "browser automation: attaches to a running browser, uses its tab, leaves it running",
  ignore: browserTestIgnore,
  async fn() {
    const site = startSite();
    const port = freePort();
    const user = await startUserBrowser(port, `${site.url}/`);
    try {
      const browser = await startHarness({ cdpPort: port });
      let closed = false;
      try {
        // The page the user had open is the one the server reads (once the
        // user's browser has parsed it: it may still be loading under load).
        const ready = await browser.call("wait_for", { selector: "#title" });
        assert.ok(!ready.isError, textOf(ready));
        const title = await browser.call("get_text", { selector: "#title" });
        assert.ok(!title.isError, textOf(title));
        assert.equal(textOf(title), "Welcome home");
        const state = browserOf(await browser.health());
        assert.equal(state.mode, "attached");
        assert.equal(state.state, "connected");
        assert.equal(state.pid, undefined, "no process of its own");
        assert.match(String(state.version), /Chrome\/\d+/);
        // Nothing was launched: no browser uses the server's profile dir.
        assert.deepEqual(
          await processesWith(join(browser.dataDir, "profiles")),
          [],
        );

        // Another session gets a tab of its own in the same browser.
        const other = await browser.connect({ agent: "b" });
        const opened = await callTool(other, "navigate", {
          url: `${site.url}/tall`,
        });
        assert.ok(!opened.isError, textOf(opened));
        assert.deepEqual(
          (await user.tabs()).map((tab) => tab.url).sort(),
          [`${site.url}/`, `${site.url}/tall`],
        );
        // The first session's tab is behind the new one now: a background
        // tab draws no frames, and a click there waited forever for its
        // element to show in view.
        const saved = await browser.call("click_element", {
          selector: "#save",
        });
        assert.ok(!saved.isError, textOf(saved));
        const status = await browser.call("get_text", { selector: "#status" });
        assert.equal(textOf(status), "saved");

        await browser.close();
        closed = true;
        // The user's browser still runs, with the user's tab; the server's own tab is gone.
        assert.ok(await alive(user.pid));
        assert.ok(await probeDebuggingPort(port));
        assert.deepEqual((await user.tabs()).map((tab) => tab.url), [
          `${site.url}/`,
        ]);
      } finally {
        if (!closed) await browser.close();
      }
    } finally {
      await user.close();
      await site.close();
    }
  },
});

Deno.test({
  name:
    "browser automation: an attached browser that goes away leaves the server degraded until a call launches one",
  ignore: browserTestIgnore,
  async fn() {
    const site = startSite();
    const port = freePort();
    const user = await startUserBrowser(port, "about:blank");
    const browser = await startHarness({
      cdpPort: port,
      config: { launch_on_start: true },
    });
    try {
      // launch_on_start: connected before any call.
      let state = browserOf(await browser.health());
      assert.equal(state.state, "connected");
      assert.equal(state.mode, "attached");

      Deno.kill(user.pid, "SIGKILL");
      const health = await waitFor(
        () => browser.health(),
        (value) => browserOf(value).state === "disconnected",
      );
      assert.equal(health.degraded, true);
      assert.equal((health.details as { status: string }).status, "degraded");
      assert.equal(browserOf(health).connected, false);

      // A call needs a browser: nothing listens any more, so one is launched.
      await browser.ok("navigate", { url: `${site.url}/` });
      state = browserOf(await browser.health());
      assert.equal(state.mode, "launched");
      assert.equal(state.state, "connected");
      assert.equal(state.restarts, 1);
      assert.equal(
        (await browser.health()).degraded,
        undefined,
        "healthy again",
      );
    } finally {
      await browser.close();
      await user.close();
      await site.close();
    }
  },
});
