// The real CLI: `agentd mcp extension-bridge --port` over streamable HTTP.
// Off loopback it refuses to start without the daemon's token; with one,
// /mcp answers only requests carrying it, and /health and /metrics show the
// browser connection and calls per tool.

import assert from "node:assert/strict";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../../platform/mcp_sdk.ts";
import { browserTestIgnore } from "../../browser.ts";
import { runCli, spawnDaemon, tempDir } from "../../helpers.ts";
import {
  callTool,
  freePort,
  prepareExtensions,
  startBrowser,
  textOf,
} from "./harness.ts";

const TOKEN = "bridge-test-token-0123456789";

/** A non-loopback IPv4 address of this machine, to reach the daemon as a remote client would. */
function lanAddress(): string | undefined {
  return Deno.networkInterfaces().find((iface) =>
    iface.family === "IPv4" && !iface.address.startsWith("127.")
  )?.address;
}

Deno.test({
  name:
    "extension bridge over HTTP: remote use needs the daemon's token; /health and /metrics",
  ignore: browserTestIgnore,
  async fn() {
    await using dir = await tempDir();
    const port = freePort();
    const flags = [
      "mcp",
      "extension-bridge",
      "--host",
      "0.0.0.0",
      "--port",
      "0",
      "--cdp-port",
      String(port),
      "--data-dir",
      dir.path,
    ];
    const refused = await runCli(flags);
    assert.notEqual(refused.code, 0);
    assert.match(
      refused.stderr,
      /refusing to listen on 0\.0\.0\.0 without a token/,
    );

    const extensions = await prepareExtensions();
    const chromium = await startBrowser(port, extensions);
    const daemon = await spawnDaemon(flags, { env: { AGENTD_TOKEN: TOKEN } });
    try {
      const base = `http://${lanAddress() ?? "127.0.0.1"}:${daemon.port}`;
      const anonymous = await fetch(`${base}/mcp`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/list",
        }),
      });
      await anonymous.body?.cancel();
      assert.equal(anonymous.status, 401);

      const transport = new StreamableHTTPClientTransport(
        new URL(`${base}/mcp`),
        {
          requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
        },
      );
      const client = new Client({ name: "bridge-remote", version: "1.0.0" });
      await client.connect(transport);
      try {
        const listed = await callTool(client, "list_extensions");
        assert.ok(!listed.isError, textOf(listed));
        assert.equal(listed.structuredContent?.count, 2);
        const refusedCdp = await callTool(client, "bridge_cdp_command", {
          command: "Runtime.evaluate",
        });
        assert.ok(refusedCdp.isError);
        assert.match(textOf(refusedCdp), /cdp_allow/);
      } finally {
        await transport.terminateSession();
        await client.close();
      }

      const auth = { authorization: `Bearer ${TOKEN}` };
      const health = await (await fetch(`${base}/health`, { headers: auth }))
        .json();
      const details = health.servers["extension-bridge"].details;
      assert.equal(details.browser.connection, "connected");
      assert.equal(details.browser.cdp_port, port);
      assert.deepEqual(details.tools.bridge_cdp_command, {
        calls: 1,
        errors: 1,
      });
      const metrics = await (await fetch(`${base}/metrics`, { headers: auth }))
        .text();
      assert.match(metrics, /agentd_extension_bridge_connected\S* 1/);
      assert.match(
        metrics,
        /agentd_tool_errors_total\{[^}]*tool="bridge_cdp_command"[^}]*\} 1/,
      );
    } finally {
      await daemon.stop();
      await chromium.close();
      await Deno.remove(extensions.dir, { recursive: true });
    }
  },
});
