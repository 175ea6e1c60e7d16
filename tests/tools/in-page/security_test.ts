// Who may reach the daemon through the extension path: only the pinned
// extension through a registered host. A web page reaching for the relay
// is refused, and so is a host registered for another extension id.

import assert from "node:assert/strict";
import { browserTestIgnore } from "../../browser.ts";
import { logged, runCli, waitFor } from "../../helpers.ts";
import {
  EXTENSION_ID,
  extensionConnected,
  ok,
  startStack,
  workerStatus,
} from "./harness.ts";

Deno.test({
  name:
    "in-page security: a web page cannot reach the relay or the extension's native port",
  ignore: browserTestIgnore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const stack = await startStack();
    try {
      const health = await extensionConnected(stack);
      const port = Number(health.relay_port);
      assert.ok(port > 0);
      const refusedBefore = Number(health.refused_connections);
      // The page tries a fetch and a WebSocket to the relay's port.
      const outcome = await stack.page.evaluate(`(async () => {
        const fetched = await fetch("http://127.0.0.1:${port}/", { method: "POST", body: "{}" })
          .then(() => "reached", (error) => "refused: " + error.message);
        const socket = await new Promise((resolve) => {
          const ws = new WebSocket("ws://127.0.0.1:${port}/");
          ws.onopen = () => resolve("open");
          ws.onerror = () => resolve("refused");
        });
        const runtime = typeof chrome === "object" && chrome.runtime ? typeof chrome.runtime.connectNative : "none";
        return { fetched, socket, runtime };
      })()`);
      assert.deepEqual(outcome, {
        fetched: "refused: Failed to fetch",
        socket: "refused",
        runtime: "none",
      });
      const after = await waitFor(
        () => stack.health(),
        (now) => Number(now.refused_connections) >= refusedBefore + 2,
      );
      assert.equal(
        after.extension,
        "connected",
        "the extension's own link is untouched",
      );
      await logged(
        stack.daemon.logs,
        (line) =>
          line.event === "relay_refused" &&
          /HTTP request/.test(String(line.reason)),
      );
      // The page learned nothing and the tools still work.
      assert.equal(
        (await ok(stack.client, "get_text_content", { selector: "#title" }))
          .text,
        "Hello in-page",
      );

      // The host itself refuses a caller that is not the agentd extension.
      const foreign = await runCli([
        "native-host",
        `chrome-extension://${"b".repeat(32)}/`,
        "--data-dir",
        stack.dataDir,
      ]);
      assert.equal(foreign.code, 1);
      assert.match(foreign.stderr, /"event":"native_host_refused"/);
      assert.equal(foreign.stdout, "", "nothing reaches the browser side");
    } finally {
      await stack.close();
    }
  },
});

Deno.test({
  name:
    "in-page security: a host manifest without our extension id is refused by the browser",
  ignore: browserTestIgnore,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const stack = await startStack({
      installArgs: ["--extension-id", "c".repeat(32)],
    });
    try {
      const manifest = JSON.parse(
        await Deno.readTextFile(
          `${stack.profile}/NativeMessagingHosts/dev.agentd.native_host.json`,
        ),
      );
      assert.deepEqual(manifest.allowed_origins, [
        `chrome-extension://${"c".repeat(32)}/`,
      ]);
      // The worker retries the host: between its connectNative() and the
      // browser's refusal a retry's port shows as connected, for a moment.
      const status = await waitFor(
        () => workerStatus(stack.browser),
        (now) =>
          /forbidden/i.test(String(now.last_error)) &&
          now.native_host === "disconnected",
      );
      assert.equal(status.native_host, "disconnected");
      assert.equal(status.extension_id, EXTENSION_ID);
      const health = await stack.health();
      assert.equal(health.extension, "waiting");
      assert.equal(
        health.host_connections,
        0,
        "no host ever reached the daemon",
      );
    } finally {
      await stack.close();
    }
  },
});
