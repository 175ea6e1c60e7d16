// The master key from a real Secret Service: gnome-keyring in a private
// D-Bus session, reached through secret-tool like on a Linux desktop.

import assert from "node:assert/strict";
import { fileURLToPath as fromFileUrl } from "node:url";
import { decodeBase64 } from "../../../platform/base64.ts";
import { ROOT, tempDir } from "../../helpers.ts";

const TOOLS = [
  "/usr/bin/dbus-run-session",
  "/usr/bin/gnome-keyring-daemon",
  "/usr/bin/secret-tool",
];
const present = TOOLS.every((path) => {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
});

Deno.test({
  name:
    "secrets: the master key lives in the Secret Service when one is present",
  // On CI the packages are installed (.ci/run), so a missing one fails there.
  ignore: !present && Deno.env.get("CI") !== "true",
  async fn() {
    await using keyring = await tempDir();
    await using data = await tempDir();
    const probe = fromFileUrl(new URL("./keychain_probe.ts", import.meta.url));
    const script = [
      // The keyring daemon gets a home of its own; the login keyring is created unlocked.
      `printf pw | HOME="$KEYRING" XDG_DATA_HOME="$KEYRING" XDG_RUNTIME_DIR="$KEYRING" ` +
      `gnome-keyring-daemon --unlock --components=secrets >/dev/null`,
      `"$DENO" run -A "$PROBE" "$DATA"`,
      `secret-tool lookup service agentd account "master-key:$DATA"`,
    ].join(" && ");
    const output = await new Deno.Command("dbus-run-session", {
      args: ["--", "bash", "-c", script],
      cwd: ROOT,
      env: {
        KEYRING: keyring.path,
        DATA: data.path,
        DENO: Deno.execPath(),
        PROBE: probe,
        NO_COLOR: "1",
      },
      stdin: "null",
    }).output();
    const stdout = new TextDecoder().decode(output.stdout).trim().split("\n");
    assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
    const report = JSON.parse(stdout[0]);
    assert.match(report.first, /^secret-service/);
    assert.equal(report.second, report.first);
    assert.equal(report.opened, "sealed with the keychain key");
    assert.equal(report.keyFile, false, "no key file beside the keychain");
    assert.equal(
      decodeBase64(stdout[1]).length,
      32,
      "secret-tool holds the 32-byte key",
    );
  },
});
