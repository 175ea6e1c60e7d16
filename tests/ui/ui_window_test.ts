// `agentd ui` under a real X server: the webview window appears with its
// title (read back through the X server), its screenshot shows the rendered
// dashboard (text and the green "running" phases, not a blank page), and
// closing the window ends `agentd ui` with 0 while the daemon it found runs on.

import assert from "node:assert/strict";
import { join } from "node:path";
import { ARTIFACTS_DIR } from "../browser.ts";
import { spawnServe, tempDir, waitFor } from "../helpers.ts";
import { finished, headlessEnv, spawnUi, UI_TOKEN } from "./ui_support.ts";
import { displayTestIgnore, startXvfb } from "./xvfb.ts";

const WIDTH = 1280;
const HEIGHT = 800;

interface Pixels {
  /** Dark pixels: text. */
  ink: number;
  /** Pixels near the dashboard's "running" green (#15803d). */
  green: number;
  colors: number;
}

function measure(rgb: Uint8Array): Pixels {
  let ink = 0;
  let green = 0;
  const colors = new Set<number>();
  for (let i = 0; i + 2 < rgb.length; i += 3) {
    const r = rgb[i] ?? 0, g = rgb[i + 1] ?? 0, b = rgb[i + 2] ?? 0;
    if (0.3 * r + 0.59 * g + 0.11 * b < 110) ink++;
    if (
      Math.abs(r - 21) < 40 && Math.abs(g - 128) < 40 && Math.abs(b - 61) < 40
    ) green++;
    colors.add((r << 16) | (g << 8) | b);
  }
  return { ink, green, colors: colors.size };
}

Deno.test({
  name: "ui: a native window on the dashboard under Xvfb; closing it exits 0",
  ignore: displayTestIgnore,
  async fn() {
    await using dir = await tempDir();
    await using display = await startXvfb(WIDTH, HEIGHT);
    const daemon = await spawnServe(dir.path, {
      env: { AGENTD_TOKEN: UI_TOKEN, AGENTD_SERVERS: "gateway,memory" },
    });
    try {
      const ui = spawnUi(
        ["--port", String(daemon.port), "--data-dir", dir.path],
        { ...headlessEnv(), DISPLAY: display.name, AGENTD_TOKEN: UI_TOKEN },
      );
      const result = finished(ui);
      const windowId = await waitFor(
        async () =>
          (await display.run("xdotool", [
            "search",
            "--name",
            "^agentd dashboard",
          ])).text.trim(),
        (found) => found !== "",
        60_000,
      );
      const id = windowId.split("\n")[0] ?? "";
      const title = (await display.run("xdotool", ["getwindowname", id])).text
        .trim();
      assert.equal(title, `agentd dashboard — ${daemon.url}`);
      // The title can be set before the window is mapped at its size: wait for both.
      const info = await waitFor(
        async () => (await display.run("xwininfo", ["-id", id])).text,
        (text) => /Map State: IsViewable/.test(text),
        60_000,
      );
      assert.match(info, /Width: 1280/);

      // The dashboard renders: text, and the servers' green "running".
      const pixels = await waitFor(
        async () =>
          measure(
            (await display.run("import", [
              "-window",
              "root",
              "-depth",
              "8",
              "rgb:-",
            ])).stdout,
          ),
        (seen) => seen.green > 40 && seen.ink > 2_000 && seen.colors > 50,
        60_000,
      );
      assert.ok(pixels.ink < WIDTH * HEIGHT / 2, "mostly dark: not the page");
      await Deno.mkdir(ARTIFACTS_DIR, { recursive: true });
      await display.run("import", [
        "-window",
        "root",
        join(ARTIFACTS_DIR, "ui-window.png"),
      ]);

      // Closing the window (as a window manager's close would) ends agentd ui with 0.
      await display.run("xdotool", ["windowclose", id]);
      const { code, stdout, stderr } = await result;
      assert.equal(code, 0, stderr);
      assert.ok(!`${stdout}${stderr}`.includes(UI_TOKEN));
      const gone = await display.run("xdotool", [
        "search",
        "--name",
        "^agentd dashboard",
      ]);
      assert.equal(gone.text.trim(), "");
      // The daemon was found, not started: it keeps running.
      const health = await fetch(`${daemon.url}/health`, {
        headers: { authorization: `Bearer ${UI_TOKEN}` },
      });
      assert.equal(health.status, 200);
      await health.body?.cancel();
    } finally {
      await daemon.stop();
    }
  },
});

Deno.test({
  name: "ui: SIGTERM closes the window and exits 0",
  ignore: displayTestIgnore,
  async fn() {
    await using dir = await tempDir();
    await using display = await startXvfb(WIDTH, HEIGHT);
    const daemon = await spawnServe(dir.path, {
      env: { AGENTD_SERVERS: "gateway" },
    });
    try {
      const ui = spawnUi(
        ["--port", String(daemon.port), "--data-dir", dir.path],
        { ...headlessEnv(), DISPLAY: display.name },
      );
      const result = finished(ui);
      await waitFor(
        async () =>
          (await display.run("xdotool", [
            "search",
            "--name",
            "^agentd dashboard",
          ])).text.trim(),
        (found) => found !== "",
        60_000,
      );
      ui.kill("SIGTERM");
      const { code, stderr } = await result;
      assert.equal(code, 0, stderr);
      await waitFor(
        async () =>
          (await display.run("xdotool", [
            "search",
            "--name",
            "^agentd dashboard",
          ])).text.trim(),
        (found) => found === "",
        10_000,
      );
    } finally {
      await daemon.stop();
    }
  },
});
