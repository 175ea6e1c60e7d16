// The six tools against Debian Chromium with two real extensions loaded: the
// companion (management, scripting, storage, host 127.0.0.1) and a plain one.

import assert from "node:assert/strict";
import puppeteer, { type Browser } from "puppeteer-core";
import { browserTestIgnore } from "../../browser.ts";
import {
  freePort,
  prepareExtensions,
  startBridge,
  startBrowser,
  startSite,
  textOf,
  waitFor,
} from "./harness.ts";

/** Reads chrome.storage.local[key] of an extension through the test's own CDP connection. */
async function storedValue(
  browser: Browser,
  id: string,
  key: string,
): Promise<unknown> {
  const target = await browser.waitForTarget((t) =>
    t.type() === "service_worker" &&
    t.url().startsWith(`chrome-extension://${id}/`)
  );
  const session = await target.createCDPSession();
  try {
    const reply = await session.send("Runtime.evaluate", {
      expression: `chrome.storage.local.get(${
        JSON.stringify(key)
      }).then((items) => items[${JSON.stringify(key)}] ?? null)`,
      awaitPromise: true,
      returnByValue: true,
    });
    return reply.result.value;
  } finally {
    await session.detach();
  }
}

function record(value: unknown): Record<string, unknown> {
  assert.ok(
    typeof value === "object" && value !== null && !Array.isArray(value),
  );
  return { ...value };
}

function list(value: unknown): unknown[] {
  assert.ok(Array.isArray(value));
  return value;
}

Deno.test({
  name: "extension bridge: the six tools on two real extensions",
  ignore: browserTestIgnore,
  async fn(t) {
    const extensions = await prepareExtensions();
    const { companion, plain } = extensions;
    const port = freePort();
    const chromium = await startBrowser(port, extensions);
    const site = startSite();
    const bridge = await startBridge({ cdp_port: port });
    const own = await puppeteer.connect({
      browserURL: `http://127.0.0.1:${port}`,
    });
    try {
      await waitFor(
        () => bridge.details(),
        (d) => record(d.browser).connected === true,
      );

      await t.step(
        "list_extensions shows both with names, versions, permissions",
        async () => {
          const listed = await bridge.ok("list_extensions");
          assert.equal(listed.companion_id, companion.id);
          const byId = new Map(
            list(listed.extensions).map((e) => [record(e).id, record(e)]),
          );
          for (const ext of [companion, plain]) {
            const entry = byId.get(ext.id);
            assert.ok(entry, `${ext.id} listed: ${JSON.stringify(listed)}`);
            assert.equal(entry.name, ext.manifest.name);
            assert.equal(entry.version, ext.manifest.version);
            assert.equal(entry.enabled, true);
            assert.deepEqual(
              [...list(entry.permissions)].sort(),
              [...list(ext.manifest.permissions)].sort(),
            );
            assert.deepEqual(
              entry.host_permissions,
              ext.manifest.host_permissions ?? [],
            );
            assert.ok(list(entry.sources).includes("management"));
          }
          assert.equal(byId.get(companion.id)?.companion, true);
        },
      );

      await t.step(
        "get_extension_state and get_extension_permissions match the manifests",
        async () => {
          const state = await bridge.ok("get_extension_state", {
            extension_id: companion.id,
          });
          assert.equal(state.name, companion.manifest.name);
          assert.equal(state.version, companion.manifest.version);
          assert.equal(state.manifest_version, 3);
          assert.equal(state.enabled, true);
          assert.equal(record(state.service_worker).script, "sw.js");
          assert.equal(record(state.service_worker).running, true);
          assert.ok(list(state.actions).includes("remember"), "its own action");
          assert.ok(list(state.actions).includes("storage_set"), "built-ins");
          assert.equal(
            record(state.manifest).description,
            companion.manifest.description,
          );

          const plainState = await bridge.ok("get_extension_state", {
            extension_id: plain.id,
          });
          assert.equal(plainState.name, plain.manifest.name);
          assert.ok(!list(plainState.actions).includes("remember"));

          const permissions = await bridge.ok("get_extension_permissions", {
            extension_id: plain.id,
          });
          assert.deepEqual(permissions.permissions, plain.manifest.permissions);
          assert.deepEqual(permissions.host_permissions, []);
          assert.deepEqual(
            permissions.optional_permissions,
            plain.manifest.optional_permissions,
          );
          assert.deepEqual(
            [...list(record(permissions.granted).permissions)].sort(),
            [...list(plain.manifest.permissions)].sort(),
          );
          const companionPermissions = await bridge.ok(
            "get_extension_permissions",
            {
              extension_id: companion.id,
            },
          );
          assert.deepEqual(
            companionPermissions.host_permissions,
            companion.manifest.host_permissions,
          );
          assert.deepEqual(record(companionPermissions.granted).origins, [
            "http://127.0.0.1/*",
          ]);

          const unknown = await bridge.call("get_extension_state", {
            extension_id: "a".repeat(32),
          });
          assert.ok(unknown.isError);
          assert.match(textOf(unknown), /extension_id: no extension a{32}/);
          const malformed = await bridge.call("get_extension_state", {
            extension_id: "nope",
          });
          assert.ok(malformed.isError);
          assert.match(textOf(malformed), /extension_id/);
        },
      );

      await t.step(
        "execute_extension_action changes the extension's storage",
        async () => {
          const own_action = await bridge.ok("execute_extension_action", {
            extension_id: companion.id,
            action: "remember",
            args: { value: "from the bridge" },
          });
          assert.equal(own_action.via, "extension");
          assert.equal(
            await storedValue(own, companion.id, "remembered"),
            "from the bridge",
          );

          // Idle service workers: a bridge that never saw the companion finds
          // it from its manifest, and workers are woken before anything runs.
          const stopWorkers = async () => {
            const session = await (await own.pages())[0].createCDPSession();
            await session.send("ServiceWorker.enable");
            await session.send("ServiceWorker.stopAllWorkers");
            await session.detach();
            await waitFor(
              () => own.targets().some((t) => t.type() === "service_worker"),
              (running) => !running,
            );
          };
          await stopWorkers();
          const fresh = await startBridge({ cdp_port: port });
          try {
            await waitFor(
              () => fresh.details(),
              (d) => record(d.browser).connected === true,
            );
            const found = await fresh.ok("list_extensions");
            assert.equal(found.companion_id, companion.id);
            assert.equal(found.count, 2);
          } finally {
            await fresh.close();
          }
          await stopWorkers();
          const builtin = await bridge.ok("execute_extension_action", {
            extension_id: plain.id,
            action: "storage_set",
            args: { items: { color: "teal", count: 3 } },
          });
          assert.equal(builtin.via, "builtin");
          assert.equal(await storedValue(own, plain.id, "color"), "teal");
          const read = await bridge.ok("execute_extension_action", {
            extension_id: plain.id,
            action: "storage_get",
            args: { keys: ["color", "count"] },
          });
          assert.deepEqual(read.result, { color: "teal", count: 3 });

          // The browser's permission model applies: the plain one may not manage others.
          const refused = await bridge.call("execute_extension_action", {
            extension_id: plain.id,
            action: "set_enabled",
            args: { extension_id: companion.id, enabled: false },
          });
          assert.ok(refused.isError);
          assert.match(textOf(refused), /lacks the 'management' permission/);
          const unknown = await bridge.call("execute_extension_action", {
            extension_id: plain.id,
            action: "explode",
          });
          assert.ok(unknown.isError);
          assert.match(
            textOf(unknown),
            /action: unknown action "explode".*storage_get/,
          );
          const badArgs = await bridge.call("execute_extension_action", {
            extension_id: plain.id,
            action: "storage_set",
            args: { area: "attic", items: {} },
          });
          assert.ok(badArgs.isError);
          assert.match(textOf(badArgs), /args: invalid for storage_set: area/);
        },
      );

      await t.step(
        "inject_content_script runs in matching pages only",
        async () => {
          const marker = await bridge.ok("inject_content_script", {
            extension_id: companion.id,
            script:
              "document.getElementById('mark').textContent = 'injected by the bridge';",
            matches: ["http://127.0.0.1/match/*"],
          });
          assert.match(String(marker.script_id), /^agentd-/);
          // A sentinel for every path: once it ran, the runner has judged every script for the page.
          await bridge.ok("inject_content_script", {
            extension_id: companion.id,
            script: "document.documentElement.dataset.sentinel = 'ran';",
            matches: ["http://127.0.0.1/*"],
          });
          const registered = await bridge.ok("execute_extension_action", {
            extension_id: companion.id,
            action: "list_content_scripts",
          });
          assert.equal(
            list(registered.result).length,
            4,
            "a runner pair per script",
          );

          const page = await own.newPage();
          const seen = async (path: string) => {
            await page.goto(`${site.url}${path}`, { waitUntil: "load" });
            await page.waitForFunction(
              "document.documentElement.dataset.sentinel === 'ran'",
            );
            return await page.$eval("#mark", (el) => el.textContent);
          };
          assert.equal(
            await seen("/match/page.html"),
            "injected by the bridge",
          );
          assert.equal(await seen("/other/page.html"), "untouched");
          await page.close();

          // A plain extension lacks the scripting permission: refused, named.
          const refused = await bridge.call("inject_content_script", {
            extension_id: plain.id,
            script: "1",
            matches: ["http://127.0.0.1/*"],
          });
          assert.ok(refused.isError);
          assert.match(textOf(refused), /lacks the 'scripting' permission/);
          const badPattern = await bridge.call("inject_content_script", {
            extension_id: companion.id,
            script: "1",
            matches: ["not a pattern"],
          });
          assert.ok(badPattern.isError);
          assert.match(textOf(badPattern), /matches/);
        },
      );

      await t.step(
        "bridge_cdp_command answers allowed methods and refuses others",
        async () => {
          const version = await bridge.ok("bridge_cdp_command", {
            command: "Browser.getVersion",
          });
          assert.match(String(record(version.result).product), /Chrome\/\d+/);
          const targets = await bridge.ok("bridge_cdp_command", {
            command: "Target.getTargets",
          });
          assert.ok(list(record(targets.result).targetInfos).length > 0);
          const refused = await bridge.call("bridge_cdp_command", {
            command: "Runtime.evaluate",
            params: { expression: "1 + 1" },
          });
          assert.ok(refused.isError);
          assert.match(
            textOf(refused),
            /Runtime\.evaluate is not allowed by the extension-bridge setting cdp_allow/,
          );
        },
      );

      await t.step(
        "enabled_only leaves out an extension the companion disabled",
        async () => {
          const disabled = await bridge.ok("execute_extension_action", {
            extension_id: companion.id,
            action: "set_enabled",
            args: { extension_id: plain.id, enabled: false },
          });
          assert.deepEqual(disabled.result, {
            extension_id: plain.id,
            enabled: false,
          });
          const all = await bridge.ok("list_extensions", {});
          const entry = list(all.extensions).map(record).find((e) =>
            e.id === plain.id
          );
          assert.equal(entry?.enabled, false);
          const enabled = await bridge.ok("list_extensions", {
            enabled_only: true,
          });
          const ids = list(enabled.extensions).map((e) => record(e).id);
          assert.deepEqual(ids, [companion.id]);
          const permissions = await bridge.ok("get_extension_permissions", {
            extension_id: plain.id,
          });
          assert.equal(permissions.granted, null);
          const asleep = await bridge.call("execute_extension_action", {
            extension_id: plain.id,
            action: "get_manifest",
          });
          assert.ok(asleep.isError);
          assert.match(
            textOf(asleep),
            new RegExp(`Extension ${plain.id} \\(.*\\) is disabled`),
          );
          assert.deepEqual(permissions.permissions, plain.manifest.permissions);
        },
      );

      const health = await bridge.details();
      const tools = record(health.tools);
      assert.ok(Number(record(tools.execute_extension_action).errors) >= 3);
      assert.ok(Number(record(tools.list_extensions).calls) >= 3);
      const metrics = bridge.host.metrics().map((m) => m.name);
      assert.ok(metrics.includes("agentd_extension_bridge_connected"));
    } finally {
      await own.disconnect();
      await bridge.close();
      await site.close();
      await chromium.close();
      await Deno.remove(extensions.dir, { recursive: true });
    }
  },
});
