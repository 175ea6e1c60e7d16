// `ask` on desktop-control.mouse_click with an MCP client that can elicit:
// the call waits for the person, who sees the tool and its arguments;
// accepting clicks on the real X server, declining is a clear denial that
// names the rule, and each call leaves one audit record.

import assert from "node:assert/strict";
import {
  Client,
  type ElicitRequestFormParams,
  ElicitRequestSchema,
  type ElicitResult,
} from "../../../platform/mcp_sdk.ts";
import { MemoryStore } from "../../../platform/store/memory.ts";
import { PolicyConfig } from "../../../platform/policy.ts";
import { desktopControlServer } from "../../../tools/desktop-control/mod.ts";
import { Guard } from "../../../tools/kit/policy/guard.ts";
import { HostedServer } from "../../../tools/kit/host.ts";
import { connectInProcess } from "../../../tools/kit/transport/sdk_server.ts";
import { capturedLog, textOf } from "../../helpers.ts";
import { startXvfb, xTestIgnore } from "../desktop-control/xvfb.ts";

function pointerOf(location: string): { x: number; y: number } {
  const match = location.match(/x:(\d+) y:(\d+)/);
  assert.ok(match, location);
  return { x: Number(match[1]), y: Number(match[2]) };
}

Deno.test({
  name:
    "policy: ask on mouse_click elicits; accept clicks, decline is a denial naming the rule",
  ignore: xTestIgnore,
  sanitizeResources: false,
  async fn() {
    const x = await startXvfb("1280x800");
    const { log } = capturedLog("info");
    const guard = new Guard(
      new MemoryStore(),
      log,
      PolicyConfig.parse({
        rules: [{
          id: "ask-clicks",
          server: "desktop-control",
          tool: "mouse_click",
          decision: "ask",
        }],
      }),
    );
    const host = await HostedServer.start(desktopControlServer, {
      store: new MemoryStore(),
      log,
      config: {},
      dataDir: "/nonexistent",
      env: { PATH: "/usr/bin:/bin", DISPLAY: x.display },
      guard,
    });
    const client = new Client({ name: "person", version: "1.0.0" }, {
      capabilities: { elicitation: { form: {} } },
    });
    const asked: ElicitRequestFormParams[] = [];
    let answer = Promise.withResolvers<ElicitResult>();
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      assert.ok(
        request.params.mode === undefined || request.params.mode === "form",
      );
      if ("requestedSchema" in request.params) asked.push(request.params);
      return answer.promise;
    });
    try {
      assert.equal(host.phase.phase, "running", host.phase.state.error);
      await client.connect(await connectInProcess(host, {}));

      // Accept: the call waits for the answer, then clicks.
      let settled = false;
      const accepted = client.callTool({
        name: "mouse_click",
        arguments: { x: 210, y: 170, coordinates: "screen" },
      }).finally(() => settled = true);
      while (asked.length === 0) await new Promise((r) => setTimeout(r, 20));
      assert.equal(settled, false, "the call waits for the person");
      assert.match(asked[0].message, /desktop-control\.mouse_click/);
      assert.match(asked[0].message, /"x":210/);
      assert.match(asked[0].message, /"y":170/);
      assert.match(asked[0].message, /ask-clicks/);
      answer.resolve({ action: "accept", content: { scope: "once" } });
      const ok = await accepted;
      assert.notEqual(ok.isError, true, textOf(ok));
      assert.deepEqual(
        pointerOf(await x.run("xdotool", ["getmouselocation"])),
        { x: 210, y: 170 },
      );

      // Decline: a clear error naming the rule; the pointer does not move.
      answer = Promise.withResolvers<ElicitResult>();
      answer.resolve({ action: "decline" });
      const declined = await client.callTool({
        name: "mouse_click",
        arguments: { x: 600, y: 500, coordinates: "screen" },
      });
      assert.equal(declined.isError, true);
      assert.match(textOf(declined), /declined desktop-control\.mouse_click/);
      assert.match(textOf(declined), /"ask-clicks"/);
      assert.equal(asked.length, 2);
      assert.deepEqual(
        pointerOf(await x.run("xdotool", ["getmouselocation"])),
        { x: 210, y: 170 },
      );

      // "Once" means once: the next click asks again; "session" grants the rest of the session.
      answer = Promise.withResolvers<ElicitResult>();
      answer.resolve({ action: "accept", content: { scope: "session" } });
      await client.callTool({
        name: "mouse_click",
        arguments: { x: 300, y: 300, coordinates: "screen" },
      });
      assert.equal(asked.length, 3);
      const granted = await client.callTool({
        name: "mouse_click",
        arguments: { x: 320, y: 310, coordinates: "screen" },
      });
      assert.notEqual(granted.isError, true, textOf(granted));
      assert.equal(asked.length, 3, "a session grant does not ask again");

      const records = await guard.audit.query();
      assert.deepEqual(
        records.map((record) => [record.tool, record.decision, record.outcome]),
        [
          ["mouse_click", "approved", "ok"],
          ["mouse_click", "declined", "refused"],
          ["mouse_click", "approved", "ok"],
          ["mouse_click", "approved", "ok"],
        ],
      );
      assert.equal(records[0].decided_by, "the user (elicitation)");
      assert.equal(records[3].decided_by, "session grant");
      assert.equal(records[0].caller, "local");
      assert.deepEqual(records[0].args, {
        x: 210,
        y: 170,
        coordinates: "screen",
      });
    } finally {
      await client.close();
      await host.stop(5000);
      await x.close();
    }
  },
});
