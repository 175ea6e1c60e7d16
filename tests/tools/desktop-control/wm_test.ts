// Under a real EWMH window manager (openbox): the window list comes from
// _NET_CLIENT_LIST (client windows, not frames), focus_window goes through
// _NET_ACTIVE_WINDOW (checked with xprop on the root), and mouse_drag on a
// title bar moves the window (checked with xwininfo).

import assert from "node:assert/strict";
import { waitFor } from "../../helpers.ts";
import { startDesktop, startXvfb, xTestIgnore } from "./xvfb.ts";

function installed(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

const noWm = !installed("/usr/bin/openbox") && Deno.env.get("CI") !== "true";

async function origin(
  run: (command: string, args: string[]) => Promise<string>,
  id: string,
): Promise<{ x: number; y: number }> {
  const info = await run("xwininfo", ["-id", id]);
  return {
    x: Number(info.match(/Absolute upper-left X:\s+(-?\d+)/)?.[1]),
    y: Number(info.match(/Absolute upper-left Y:\s+(-?\d+)/)?.[1]),
  };
}

Deno.test({
  name:
    "desktop: under openbox, EWMH list and activation, and a title-bar drag moves the window",
  ignore: xTestIgnore || noWm,
  sanitizeResources: false,
  async fn() {
    const x = await startXvfb();
    try {
      x.spawn("openbox", ["--sm-disable"]);
      await waitFor(
        () =>
          x.run("xprop", ["-root", "_NET_SUPPORTING_WM_CHECK"]).catch(() => ""),
        (text) => /window id/.test(text),
      );
      x.spawn("xterm", ["-T", "WM Term", "-geometry", "60x10+100+100"]);
      x.spawn("xlogo", ["-geometry", "150x150+700+300"]);
      const term = await x.windowByName("WM Term");
      const logo = await x.windowByName("xlogo");
      const desktop = await startDesktop(x.display);
      try {
        const health = await desktop.host.health();
        assert.match(JSON.stringify(health.details), /"window_manager":"ewmh"/);
        const listed = await waitFor(
          () => desktop.ok("get_window_list"),
          (list) => (list.count as number) >= 2,
        );
        const ids = (listed.windows as { id: string }[]).map((w) =>
          BigInt(w.id)
        );
        assert.ok(
          ids.includes(BigInt(term)),
          "the xterm client window is listed",
        );
        assert.ok(
          ids.includes(BigInt(logo)),
          "the xlogo client window is listed",
        );

        for (
          const [target, args] of [
            [logo, { title: "xlogo" }],
            [term, { window_id: `0x${BigInt(term).toString(16)}` }],
          ] as const
        ) {
          await desktop.ok("focus_window", args);
          const active = await x.run("xprop", ["-root", "_NET_ACTIVE_WINDOW"]);
          assert.equal(
            BigInt(active.match(/0x[0-9a-f]+/)?.[0] ?? "0"),
            BigInt(target),
            `${JSON.stringify(args)} is the WM's active window`,
          );
        }

        // Drag the xlogo by its title bar (just above the client area).
        const before = await origin(x.run, logo);
        await desktop.ok("mouse_drag", {
          from: { x: before.x + 40, y: before.y - 8 },
          to: { x: before.x + 240, y: before.y + 142 },
          coordinates: "screen",
        });
        const after = await waitFor(
          () => origin(x.run, logo),
          (point) => point.x !== before.x,
        );
        assert.ok(
          Math.abs(after.x - before.x - 200) <= 2 &&
            Math.abs(after.y - before.y - 150) <= 2,
          `moved by (200, 150): ${JSON.stringify(before)} → ${
            JSON.stringify(after)
          }`,
        );
      } finally {
        await desktop.close();
      }
    } finally {
      await x.close();
    }
  },
});
