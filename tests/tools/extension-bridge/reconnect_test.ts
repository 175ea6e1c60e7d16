// Lifecycle: the bridge starts before the browser and attaches once it
// listens; when the browser is killed it reconnects by itself with
// exponential backoff (visible in /health), calls meanwhile fail at once with
// a clear error, and the first call after the browser is back works. Shutdown
// leaves the user's browser running.

import assert from "node:assert/strict";
import { probeDebuggingPort } from "../../../platform/browser.ts";
import { browserTestIgnore } from "../../browser.ts";
import {
  type Bridge,
  freePort,
  prepareExtensions,
  type RunningBrowser,
  startBridge,
  startBrowser,
  textOf,
  waitFor,
} from "./harness.ts";

function record(value: unknown): Record<string, unknown> {
  assert.ok(typeof value === "object" && value !== null);
  return { ...value };
}

async function connection(bridge: Bridge): Promise<Record<string, unknown>> {
  return record((await bridge.details()).browser);
}

/** A call made while the browser is away: an error naming the next attempt, not a hang. */
async function assertFailsFast(bridge: Bridge, port: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<"hung">((resolve) => {
    timer = setTimeout(() => resolve("hung"), 10_000);
  });
  const result = await Promise.race([bridge.call("list_extensions"), hung]);
  clearTimeout(timer);
  assert.notEqual(result, "hung", "a call while disconnected must not hang");
  if (result === "hung") return;
  assert.ok(result.isError, textOf(result));
  assert.match(
    textOf(result),
    new RegExp(
      `No browser connection on CDP port ${port}.*next attempt at \\d{4}-`,
    ),
  );
}

Deno.test({
  name:
    "extension bridge: attaches when the browser appears, reconnects with backoff after a kill",
  ignore: browserTestIgnore,
  async fn() {
    const extensions = await prepareExtensions();
    const port = freePort();
    const bridge = await startBridge({ cdp_port: port });
    let chromium: RunningBrowser | undefined;
    try {
      // No browser yet: the server runs, degraded, retrying in the background.
      const waiting = await waitFor(
        () => connection(bridge),
        (c) =>
          c.connection === "reconnecting" && typeof c.next_attempt === "string",
      );
      assert.equal(waiting.connected, false);
      // Waiting for the user's browser is not a fault: the daemon stays healthy.
      assert.equal((await bridge.details()).status, "waiting");
      assert.equal((await bridge.host.health()).degraded, undefined);
      await assertFailsFast(bridge, port);

      chromium = await startBrowser(port, extensions);
      await waitFor(
        () => connection(bridge),
        (c) => c.connected === true,
        40_000,
      );
      const first = await bridge.ok("list_extensions");
      assert.equal(first.count, 2);

      // The browser dies: reconnect attempts back off exponentially.
      await chromium.kill();
      const away = await waitFor(
        () => connection(bridge),
        (c) => c.connection === "reconnecting",
      );
      assert.equal(away.connected, false);
      assert.equal(typeof away.last_disconnect, "string");
      assert.equal((await bridge.details()).status, "degraded");
      await assertFailsFast(bridge, port);
      const failures = () =>
        bridge.logs.filter((line) =>
          line.event === "browser_reconnect_failed" &&
          Date.parse(line.time) >= Date.parse(String(away.last_disconnect))
        );
      await waitFor(failures, (lines) => lines.length >= 3);
      const delays = failures().slice(0, 3).map((line) =>
        Number(line.retry_in_ms)
      );
      assert.ok(
        delays[0] < delays[1] && delays[1] < delays[2],
        `growing delays: ${delays}`,
      );
      const health = await connection(bridge);
      assert.equal(typeof health.next_attempt, "string");
      assert.ok(
        Date.parse(String(health.next_attempt)) >
          Date.parse(String(away.last_disconnect)),
      );

      // Back on the same port: the bridge reconnects by itself; the next call works.
      chromium = await startBrowser(port, extensions);
      const back = await waitFor(
        () => connection(bridge),
        (c) => c.connected === true,
        40_000,
      );
      assert.equal(back.connection, "connected");
      assert.equal(back.restarts, 1);
      assert.equal(back.next_attempt, undefined);
      const again = await bridge.ok("list_extensions");
      assert.equal(again.count, 2);
      const metrics = bridge.host.metrics();
      const reconnects = metrics.find((m) =>
        m.name === "agentd_extension_bridge_reconnects_total"
      );
      assert.equal(reconnects?.samples[0].value, 1);
      const connected = metrics.find((m) =>
        m.name === "agentd_extension_bridge_connected"
      );
      assert.equal(connected?.samples[0].value, 1);
      const tools = record((await bridge.details()).tools);
      assert.deepEqual(tools.list_extensions, { calls: 4, errors: 2 });

      // Shutdown disconnects; the browser is the user's and keeps running.
      await bridge.close();
      assert.ok(await probeDebuggingPort(port), "the browser still listens");
    } finally {
      await bridge.close().catch(() => {});
      await chromium?.close();
      await Deno.remove(extensions.dir, { recursive: true });
    }
  },
});
