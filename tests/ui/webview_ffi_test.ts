// ffi/webview.ts against the real library under Xvfb: a window with its
// title, init script, bound functions answered through webview_return, and
// terminate ending run(); plus the library's name per OS and its error.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  libraryFileName,
  libraryPath,
  openLibrary,
  WebviewUnavailable,
} from "../../ffi/webview.ts";
import { ROOT, tempDir } from "../helpers.ts";
import { headlessEnv } from "./ui_support.ts";
import { displayTestIgnore, startXvfb } from "./xvfb.ts";

Deno.test("webview ffi: the library per OS and architecture, from the npm package", () => {
  assert.equal(libraryFileName("linux", "x86_64"), "libwebview-x64.so");
  assert.equal(libraryFileName("linux", "aarch64"), "libwebview-arm64.so");
  assert.equal(libraryFileName("darwin", "aarch64"), "libwebview.dylib");
  assert.equal(libraryFileName("windows", "x86_64"), "libwebview.dll");
  assert.match(libraryPath(), /webview-bun\/build\/libwebview/);
  assert.ok(Deno.statSync(libraryPath()).isFile);
  assert.equal(libraryPath({ AGENTD_WEBVIEW_LIB: "/x/y.so" }), "/x/y.so");
});

Deno.test("webview ffi: a missing library is a clear error naming the system package", () => {
  let error: unknown;
  try {
    openLibrary({ AGENTD_WEBVIEW_LIB: "/nonexistent/libwebview-x64.so" })
      .close();
  } catch (caught) {
    error = caught;
  }
  assert.ok(error instanceof WebviewUnavailable);
  assert.match(error.message, /\/nonexistent\/libwebview-x64\.so/);
  if (Deno.build.os === "linux") {
    assert.match(error.message, /apt-get install libwebkitgtk-6\.0-4/);
  }
});

Deno.test({
  name:
    "webview ffi: bind/return, init, set_html, title and terminate in a real window",
  ignore: displayTestIgnore,
  async fn() {
    await using dir = await tempDir();
    await using display = await startXvfb(640, 480);
    const report = join(dir.path, "report.json");
    const probe = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", join(ROOT, "tests/ui/webview_probe.ts"), report],
      cwd: ROOT,
      clearEnv: true,
      env: { ...headlessEnv(), DISPLAY: display.name },
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    const output = await probe;
    const stderr = new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 0, stderr);
    assert.deepEqual(JSON.parse(await Deno.readTextFile(report)), [
      { sum: 42, init: "init ran", title: "" },
    ]);
  },
});
