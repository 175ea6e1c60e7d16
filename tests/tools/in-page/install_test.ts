// `agentd native-host install`: the launcher and the host manifests for
// every browser and OS, with the extension id pinned.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  hostTargets,
  launcherScript,
} from "../../../cli/native_host_install.ts";
import { PINNED_EXTENSION_ID } from "../../../tools/in-page/config.ts";
import { runCli, tempDir } from "../../helpers.ts";

const NAME = "dev.agentd.native_host.json";

Deno.test("native-host install writes a launcher and pinned manifests for Chrome, Chromium, Edge and Brave", async () => {
  await using home = await tempDir();
  const dataDir = join(home.path, "data");
  const result = await runCli(
    ["native-host", "install", "--data-dir", dataDir],
    { HOME: home.path },
  );
  assert.equal(result.code, 0, result.stderr);
  const launcher = join(dataDir, "native-host", "agentd-native-host");
  assert.match(
    result.stdout,
    new RegExp(`for extension ${PINNED_EXTENSION_ID}`),
  );
  for (
    const dir of [
      ".config/google-chrome",
      ".config/chromium",
      ".config/microsoft-edge",
      ".config/BraveSoftware/Brave-Browser",
    ]
  ) {
    const manifest = JSON.parse(
      await Deno.readTextFile(
        join(home.path, dir, "NativeMessagingHosts", NAME),
      ),
    );
    assert.deepEqual(manifest, {
      name: "dev.agentd.native_host",
      description:
        "agentd: relays the companion extension to the local agentd daemon",
      path: launcher,
      type: "stdio",
      allowed_origins: [`chrome-extension://${PINNED_EXTENSION_ID}/`],
    });
  }
  const stat = await Deno.stat(launcher);
  assert.equal((stat.mode ?? 0) & 0o111, 0o111, "the launcher is executable");
  const script = await Deno.readTextFile(launcher);
  assert.match(script, /^#!\/bin\/sh\n/);
  assert.match(script, /'native-host' '--data-dir' '[^']+\/data' "\$@"/);

  // The launcher runs agentd native-host, which refuses a caller other than our extension.
  const run = await new Deno.Command(launcher, {
    args: [`chrome-extension://${"d".repeat(32)}/`],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(run.code, 1);
  assert.match(new TextDecoder().decode(run.stderr), /native_host_refused/);
});

Deno.test("native-host install --browser picks browsers; --extension-id must be an id", async () => {
  await using home = await tempDir();
  const dataDir = join(home.path, "data");
  const one = await runCli(
    ["native-host", "install", "--browser", "chromium", "--data-dir", dataDir],
    { HOME: home.path },
  );
  assert.equal(one.code, 0, one.stderr);
  await Deno.stat(
    join(home.path, ".config/chromium/NativeMessagingHosts", NAME),
  );
  await assert.rejects(
    Deno.stat(
      join(home.path, ".config/google-chrome/NativeMessagingHosts", NAME),
    ),
    Deno.errors.NotFound,
  );
  const bad = await runCli(
    [
      "native-host",
      "install",
      "--extension-id",
      "not-an-id",
      "--data-dir",
      dataDir,
    ],
    { HOME: home.path },
  );
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--extension-id "not-an-id" is not an extension id/);
});

Deno.test("host manifest locations on macOS and Windows (registry keys)", () => {
  const mac = hostTargets("darwin", "/Users/ada", "/data", ["chrome", "brave"]);
  assert.deepEqual(mac.map((target) => target.manifest), [
    `/Users/ada/Library/Application Support/Google/Chrome/NativeMessagingHosts/${NAME}`,
    `/Users/ada/Library/Application Support/BraveSoftware/Brave-Browser/NativeMessagingHosts/${NAME}`,
  ]);
  const windows = hostTargets("windows", "C:\\Users\\ada", "C:\\data", [
    "chrome",
    "chromium",
    "edge",
    "brave",
  ]);
  assert.deepEqual(windows.map((target) => target.registryKey), [
    "HKCU\\Software\\Google\\Chrome\\NativeMessagingHosts\\dev.agentd.native_host",
    "HKCU\\Software\\Chromium\\NativeMessagingHosts\\dev.agentd.native_host",
    "HKCU\\Software\\Microsoft\\Edge\\NativeMessagingHosts\\dev.agentd.native_host",
    "HKCU\\Software\\BraveSoftware\\Brave-Browser\\NativeMessagingHosts\\dev.agentd.native_host",
  ]);
  assert.equal(windows[0].manifest, `C:\\data\\native-host\\chrome\\${NAME}`);
  const bat = launcherScript("windows", ["C:\\agentd.exe"], "C:\\data");
  assert.match(bat, /^@echo off\r\n/);
  assert.match(
    bat,
    /"C:\\agentd\.exe" "native-host" "--data-dir" "C:\\data" %\*\r\n$/,
  );
});
