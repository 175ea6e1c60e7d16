// The repo's own companion extension (extension/, freshly built) as the
// bridge's companion: found without configuration, its chrome.management
// catalog used, and content scripts registered through the files it ships.

import assert from "node:assert/strict";
import { join } from "node:path";
import { buildExtension } from "../../../extension/build.ts";
import { PINNED_EXTENSION_ID } from "../../../tools/in-page/config.ts";
import { browserTestIgnore } from "../../browser.ts";
import {
  type Extensions,
  freePort,
  prepareExtensions,
  startBridge,
  startBrowser,
} from "./harness.ts";

function records(value: unknown): Record<string, unknown>[] {
  assert.ok(Array.isArray(value));
  return value.map((item) => {
    assert.ok(typeof item === "object" && item !== null);
    return { ...item };
  });
}

Deno.test({
  name:
    "extension bridge: the companion extension from extension/ is the companion",
  ignore: browserTestIgnore,
  async fn() {
    const fixtures = await prepareExtensions();
    const built = await buildExtension(join(fixtures.dir, "agentd-companion"));
    const manifest = JSON.parse(
      await Deno.readTextFile(join(built, "manifest.json")),
    );
    const extensions: Extensions = {
      dir: fixtures.dir,
      companion: { id: PINNED_EXTENSION_ID, path: built, manifest },
      plain: fixtures.plain,
    };
    const browser = await startBrowser(freePort(), extensions);
    const bridge = await startBridge({ cdp_port: browser.port });
    try {
      const listed = records(
        (await bridge.ok("list_extensions", {})).extensions,
      );
      const ours = listed.find((item) => item.id === PINNED_EXTENSION_ID);
      assert.ok(ours, `our companion listed: ${JSON.stringify(listed)}`);
      assert.equal(ours.name, "agentd companion");
      assert.ok(
        listed.some((item) => item.id === fixtures.plain.id),
        "the other extension is listed through chrome.management",
      );
      const permissions = await bridge.ok("get_extension_permissions", {
        extension_id: PINNED_EXTENSION_ID,
      });
      for (const permission of ["management", "scripting", "storage"]) {
        assert.ok(
          JSON.stringify(permissions).includes(`"${permission}"`),
          `${permission} granted: ${JSON.stringify(permissions)}`,
        );
      }
      assert.equal((await bridge.details()).companion_id, PINNED_EXTENSION_ID);

      // registerContentScripts takes only packaged files: this works only
      // because the build ships agentd_runner.js and agentd_main.js.
      const injected = await bridge.ok("inject_content_script", {
        extension_id: PINNED_EXTENSION_ID,
        script: "document.documentElement.dataset.agentd = 'companion';",
        matches: ["http://127.0.0.1/*"],
      });
      const registered = await bridge.ok("execute_extension_action", {
        extension_id: PINNED_EXTENSION_ID,
        action: "list_content_scripts",
      });
      assert.ok(
        JSON.stringify(registered.result).includes(String(injected.script_id)),
        `registered: ${JSON.stringify(registered)}`,
      );
    } finally {
      await bridge.close();
      await browser.close();
      await Deno.remove(fixtures.dir, { recursive: true });
    }
  },
});
