// The real CLI on a test Xvfb: `agentd mcp desktop-control` over stdio, and
// `agentd serve` with the tools under /mcp/desktop-control and through the
// gateway as desktop-control__<tool>.

import assert from "node:assert/strict";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../../platform/mcp_sdk.ts";
import { fixtureStdio, spawnServe, tempDir } from "../../helpers.ts";
import { startXvfb, xTestIgnore } from "./xvfb.ts";

Deno.test({
  name:
    "desktop: stdio alone and serve (own path and gateway) drive a real display",
  ignore: xTestIgnore,
  sanitizeResources: false,
  async fn() {
    const x = await startXvfb();
    await using dir = await tempDir();
    try {
      x.spawn("xlogo", ["-geometry", "120x120+40+40"]);
      const logo = await x.windowByName("xlogo");

      const stdio = new Client({ name: "desktop-stdio", version: "1.0.0" });
      await stdio.connect(
        fixtureStdio(["mcp", "desktop-control", "--data-dir", dir.path], {
          DISPLAY: x.display,
        }),
      );
      try {
        const { tools } = await stdio.listTools();
        assert.equal(tools.length, 13);
        const listed = await stdio.callTool({
          name: "get_window_list",
          arguments: {},
        });
        assert.match(
          JSON.stringify(listed.structuredContent),
          new RegExp(`"id":"0x${BigInt(logo).toString(16)}"`),
        );
      } finally {
        await stdio.close();
      }

      const daemon = await spawnServe(dir.path, {
        env: { DISPLAY: x.display },
      });
      try {
        // A display that answers: nothing to say until the first call loads it.
        const before = await (await fetch(`${daemon.url}/health`)).json();
        assert.equal(before.servers["desktop-control"].phase, "not_loaded");
        for (
          const [path, tool] of [
            ["/mcp/desktop-control", "mouse_move"],
            ["/mcp", "desktop-control__mouse_move"],
          ]
        ) {
          const client = new Client({ name: "desktop-http", version: "1.0.0" });
          await client.connect(
            new StreamableHTTPClientTransport(new URL(`${daemon.url}${path}`)),
          );
          try {
            const target = path === "/mcp" ? 77 : 55;
            const moved = await client.callTool({
              name: tool,
              arguments: { x: target, y: target, coordinates: "screen" },
            });
            assert.notEqual(moved.isError, true, JSON.stringify(moved));
            const where = await x.run("xdotool", ["getmouselocation"]);
            assert.match(where, new RegExp(`x:${target} y:${target}`), path);
          } finally {
            await client.close();
          }
        }
        const health = await (await fetch(`${daemon.url}/health`)).json();
        assert.equal(health.servers["desktop-control"].phase, "running");
        assert.equal(
          health.servers["desktop-control"].details.desktop.display,
          x.display,
        );
      } finally {
        await daemon.stop();
      }
    } finally {
      await x.close();
    }
  },
});
