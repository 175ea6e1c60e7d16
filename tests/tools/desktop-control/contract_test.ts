// The Desktop port's contract, run against the backend of the OS the test
// runs on: X11 under a test Xvfb here; the macOS and Windows backends would
// meet the same cases on those systems (no such machine in CI yet).

import assert from "node:assert/strict";
import { openDesktop } from "../../../tools/desktop-control/backends/open.ts";
import { DesktopControlConfig } from "../../../tools/desktop-control/config.ts";
import { startXvfb, xTestIgnore } from "./xvfb.ts";

Deno.test({
  name: "desktop port contract: screen, capture, pointer, windows, keys",
  ignore: Deno.build.os === "linux" && xTestIgnore,
  sanitizeResources: false,
  async fn() {
    const x = Deno.build.os === "linux" ? await startXvfb() : undefined;
    const { desktop, clipboard } = await openDesktop(
      DesktopControlConfig.parse({}),
      x ? { DISPLAY: x.display, PATH: "/usr/bin:/bin" } : Deno.env.toObject(),
    );
    try {
      const screen = desktop.screen();
      assert.ok(screen.width > 0 && screen.height > 0);
      const monitors = desktop.monitors();
      assert.ok(monitors.length >= 1);
      for (const monitor of monitors) {
        assert.ok(
          monitor.width > 0 && monitor.x >= screen.x,
          JSON.stringify(monitor),
        );
      }

      const region = {
        x: screen.x + 10,
        y: screen.y + 20,
        width: 64,
        height: 48,
      };
      const frame = desktop.capture(region);
      // HiDPI backends may return more pixels than the region has points, never fewer.
      assert.ok(frame.width >= 64 && frame.height >= 48);
      assert.ok(frame.stride >= frame.width * 4);
      assert.ok(
        frame.data.length >=
          (frame.height - 1) * frame.stride + frame.width * 4,
      );

      const point = { x: screen.x + 123, y: screen.y + 77 };
      desktop.moveMouse(point);
      assert.deepEqual(desktop.pointer(), point);

      const all = desktop.windows(true);
      const shown = desktop.windows(false);
      assert.ok(Array.isArray(all));
      for (const window of shown) {
        assert.equal(typeof window.id, "string");
        assert.ok(all.some((each) => each.id === window.id), "shown ⊆ all");
      }

      assert.throws(() => desktop.pressKeys(["NoSuchKeyName"]), /Unknown key/);
      assert.deepEqual(desktop.typeText("ok"), {
        chars: 2,
        remapped: 0,
      });
      assert.equal(typeof desktop.health(), "object");
      assert.equal(typeof clipboard.via, "string");
    } finally {
      await clipboard.close();
      desktop.close();
      await x?.close();
    }
  },
});
