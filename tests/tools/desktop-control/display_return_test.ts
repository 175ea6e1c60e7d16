// A display lost while `agentd serve` runs (issue 34, item 6): the X server
// is killed, desktop-control moves to Error with the reason and the fix and
// alerts the operator, the daemon lives on and answers calls with isError;
// an X server started again on the same display number brings it back to
// running by itself.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../../platform/mcp_sdk.ts";
import { spawnServe, tempDir, textOf, waitFor } from "../../helpers.ts";
import { startXvfb, type XServer, xTestIgnore } from "./xvfb.ts";

interface ServerHealth {
  phase: string;
  error?: string;
  details?: { desktop?: { display?: string } };
}

Deno.test({
  name:
    "desktop: a display killed at run time → Error with reason, fix and alert, the daemon answers isError; the display back → running by itself",
  ignore: xTestIgnore,
  sanitizeResources: false,
  async fn() {
    await using dir = await tempDir();
    const alerts: Record<string, unknown>[] = [];
    const webhook = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      async (request) => {
        alerts.push(await request.json());
        return new Response(null, { status: 204 });
      },
    );
    const config = join(dir.path, "agentd.json");
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        servers: ["desktop-control"],
        "desktop-control": {
          alert_webhook: `http://127.0.0.1:${webhook.addr.port}/alerts`,
          display_check_ms: 200,
          display_retry_max_ms: 1_000,
        },
      }),
    );
    // A display number far above those -displayfd hands out (the lowest
    // free), so no other test's X server takes it while this one is down.
    let x: XServer | undefined;
    for (let attempt = 1; x === undefined; attempt++) {
      const number = 200 + Math.floor(Math.random() * 700);
      x = await startXvfb("1280x800", [`:${number}`]).catch((error) => {
        if (attempt === 5) throw error;
        return undefined;
      });
    }
    const display = x.display;
    const daemon = await spawnServe(join(dir.path, "data"), {
      extra: ["--config", config],
      env: { DISPLAY: display },
    });
    const client = new Client({ name: "display-return", version: "1.0.0" });
    const desktop = async (): Promise<ServerHealth> => {
      const health = await (await fetch(`${daemon.url}/health`)).json();
      return health.servers["desktop-control"];
    };
    try {
      await client.connect(
        new StreamableHTTPClientTransport(
          new URL(`${daemon.url}/mcp/desktop-control`),
        ),
      );
      const first = await client.callTool({
        name: "screenshot",
        arguments: {},
      });
      assert.notEqual(first.isError, true, textOf(first));
      assert.equal((await desktop()).phase, "running");

      // The X server goes away; nobody calls: the daemon notices by itself.
      await x.close();
      x = undefined;
      const lost = await waitFor(desktop, (each) => each.phase === "error");
      const reason = lost.error ?? "";
      assert.match(reason, new RegExp(`X display "${display}" broke`));
      assert.match(reason, new RegExp(`start an X server on "${display}"`));
      assert.match(reason, /open it again by itself/);
      const raised = await waitFor(
        () => alerts,
        (all) => all.some((each) => each.event === "desktop_unavailable"),
      );
      assert.match(
        String(
          raised.find((each) => each.event === "desktop_unavailable")
            ?.reason,
        ),
        /broke/,
      );

      // Alive, and a call says why it cannot run.
      const refused = await client.callTool({
        name: "screenshot",
        arguments: {},
      });
      assert.equal(refused.isError, true);
      assert.match(textOf(refused), /phase error.*broke/);

      // The X server is back on the same display number: running again, calls work.
      x = await startXvfb("1280x800", [display]);
      assert.equal(x.display, display);
      await waitFor(desktop, (each) => each.phase === "running", 30_000);
      const back = await client.callTool({ name: "screenshot", arguments: {} });
      assert.notEqual(back.isError, true, textOf(back));
      assert.equal((await desktop()).details?.desktop?.display, display);
      await waitFor(
        () => alerts,
        (all) => all.some((each) => each.event === "desktop_available"),
      );
      assert.deepEqual(daemon.stray, [], "nothing but JSON logs on stderr");
    } finally {
      await client.close();
      const status = await daemon.stop();
      await x?.close();
      await webhook.shutdown();
      assert.equal(status.code, 0, "the daemon exits cleanly");
    }
  },
});
