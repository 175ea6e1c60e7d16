// desktop-control loads its X11 backend (the Xlib/XTest symbol tables of
// ffi/x11.ts and the x11_*.ts modules) only when a display is named: a
// headless daemon reports "DISPLAY is not set" in /health and to MCP clients
// without loading any of it. Deno's debug log names every ES module it loads
// ("V8 code cache … for ES module: <url>"), which is what is read here.

import assert from "node:assert/strict";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../../platform/mcp_sdk.ts";
import {
  FIXTURE_CLI,
  INITIALIZE_REQUEST,
  responseTo,
  ROOT,
  spawnServe,
  tempDir,
} from "../../helpers.ts";
import { startXvfb, xTestIgnore } from "./xvfb.ts";

const X11_MODULES = [
  "ffi/x11.ts",
  "tools/desktop-control/backends/x11.ts",
  "tools/desktop-control/backends/x11_clipboard.ts",
  "tools/desktop-control/backends/x11_display.ts",
  "tools/desktop-control/backends/x11_capture.ts",
  "tools/desktop-control/backends/x11_keyboard.ts",
  "tools/desktop-control/backends/x11_windows.ts",
];

const root = new URL(`file://${ROOT.endsWith("/") ? ROOT : `${ROOT}/`}`).href;

/** Repository paths of the modules a debug log says were loaded. */
function loadedModules(log: Iterable<string>): Set<string> {
  const loaded = new Set<string>();
  for (const line of log) {
    const url = /for ES module: (file:\/\/\S+?),/.exec(line)?.[1];
    if (url?.startsWith(root)) loaded.add(url.slice(root.length));
  }
  return loaded;
}

Deno.test("desktop: without a display the daemon says so in /health and to clients, loading no X11 module", async () => {
  await using dir = await tempDir();
  // An empty DISPLAY is no display, whatever the test runner's is.
  const daemon = await spawnServe(dir.path, {
    env: { DISPLAY: "", DENO_LOG: "debug" },
  });
  try {
    const health = await (await fetch(`${daemon.url}/health`)).json();
    const desktop = health.servers["desktop-control"];
    assert.equal(desktop.phase, "error");
    assert.match(desktop.error, /DISPLAY is not set.*Xvfb :99/);
    // Memory waits for its first use; the display holds nothing else back.
    assert.equal(health.servers.memory.phase, "not_loaded");
    const client = new Client({ name: "headless", version: "1.0.0" });
    await assert.rejects(
      client.connect(
        new StreamableHTTPClientTransport(
          new URL(`${daemon.url}/mcp/desktop-control`),
        ),
      ),
      /desktop-control.*phase error.*DISPLAY is not set/,
    );
  } finally {
    await daemon.stop();
  }
  const loaded = loadedModules(daemon.stray);
  assert.ok(
    loaded.has("tools/desktop-control/backends/open.ts"),
    "the debug log names the modules loaded",
  );
  assert.deepEqual(X11_MODULES.filter((path) => loaded.has(path)), []);
});

Deno.test({
  name: "desktop: with a display the X11 backend loads and answers",
  ignore: xTestIgnore,
  async fn() {
    await using dir = await tempDir();
    const x = await startXvfb();
    try {
      const requests = [
        INITIALIZE_REQUEST,
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", id: 2, method: "tools/list" },
        {
          jsonrpc: "2.0",
          id: 3,
          method: "tools/call",
          params: { name: "get_window_list", arguments: {} },
        },
      ];
      const server = new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          FIXTURE_CLI,
          "mcp",
          "desktop-control",
          "--data-dir",
          dir.path,
        ],
        cwd: ROOT,
        env: { NO_COLOR: "1", DISPLAY: x.display, DENO_LOG: "debug" },
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const writer = server.stdin.getWriter();
      const answered = server.output();
      for (const request of requests) {
        await writer.write(
          new TextEncoder().encode(JSON.stringify(request) + "\n"),
        );
      }
      await writer.close();
      const { code, stdout, stderr } = await answered;
      const log = new TextDecoder().decode(stderr).split("\n");
      assert.equal(
        code,
        0,
        log.filter((line) => line.startsWith("{")).join("\n"),
      );
      const answers = new TextDecoder().decode(stdout).split("\n").filter(
        (line) => line !== "",
      );
      assert.match(
        JSON.stringify(responseTo(answers, 2)),
        /"name":"screenshot"/,
      );
      const listed = responseTo(answers, 3)?.result;
      assert.ok(
        typeof listed === "object" && listed !== null &&
          !("isError" in listed && listed.isError === true),
        JSON.stringify(listed),
      );
      const loaded = loadedModules(log);
      assert.deepEqual(X11_MODULES.filter((path) => !loaded.has(path)), []);
    } finally {
      await x.close();
    }
  },
});
