// Mouse and screen on a real X server: clicks reach an xev window where the X
// server says, image coordinates of a downscaled screenshot land on the right
// screen pixel, a drag selects xterm text (read back with xclip), and a
// region screenshot shows the pixels X clients drew.

import assert from "node:assert/strict";
import { decode as decodePng } from "fast-png";
import jpeg from "jpeg-js";
import { waitFor } from "../../helpers.ts";
import { startDesktop, startXvfb, xTestIgnore } from "./xvfb.ts";

/** Collects a child's stdout as text. */
function collect(child: Deno.ChildProcess): { text(): string } {
  let text = "";
  (async () => {
    for await (
      const chunk of child.stdout.pipeThrough(new TextDecoderStream())
    ) text += chunk;
  })().catch(() => {});
  return { text: () => text };
}

function pointerOf(location: string): { x: number; y: number } {
  const match = location.match(/x:(\d+) y:(\d+)/);
  assert.ok(match, location);
  return { x: Number(match[1]), y: Number(match[2]) };
}

Deno.test({
  name:
    "desktop: clicks, image coordinates of a downscaled screenshot, drag selects text",
  ignore: xTestIgnore,
  sanitizeResources: false,
  async fn() {
    const x = await startXvfb("1920x1080");
    const desktop = await startDesktop(x.display);
    try {
      const xev = x.spawn("xev", ["-geometry", "400x300+600+400"], {
        stdout: "piped",
      });
      const events = collect(xev);
      await x.windowByName("Event Tester");

      // A full-screen screenshot is scaled to 1280 wide: 2/3 of the screen.
      const shot = await desktop.ok("screenshot", {});
      assert.equal(shot.width, 1280);
      assert.equal(shot.height, 720);
      assert.equal(shot.scale, 0.666667);

      // Image pixel (500, 366) covers screen pixels 750-751 × 549-550; its centre is (750, 549).
      await desktop.ok("mouse_click", { x: 500, y: 366 });
      assert.deepEqual(
        pointerOf(await x.run("xdotool", ["getmouselocation"])),
        { x: 750, y: 549 },
      );
      await waitFor(
        () => events.text(),
        (text) =>
          /ButtonPress[^]*root:\(750,549\),\s+state 0x0, button 1/.test(text),
      );

      // Screen coordinates on request, right button.
      await desktop.ok("mouse_click", {
        x: 700,
        y: 500,
        button: "right",
        coordinates: "screen",
      });
      await waitFor(
        () => events.text(),
        (text) =>
          /ButtonPress[^]*root:\(700,500\),\s+state 0x0, button 3/.test(text),
      );
      await desktop.ok("mouse_move", { x: 620, y: 420, coordinates: "screen" });
      assert.deepEqual(
        pointerOf(await x.run("xdotool", ["getmouselocation"])),
        { x: 620, y: 420 },
      );

      // Outside the screenshot: refused, naming the field.
      const outside = await desktop.call("mouse_click", { x: 1300, y: 10 });
      assert.ok(outside.isError);
      assert.match(
        outside.content[0].text ?? "",
        /x, y \(1300, 10\) is outside screenshot/,
      );

      // A drag across xterm's first row selects its text (the PRIMARY selection).
      x.spawn("xterm", [
        "-T",
        "Drag",
        "-geometry",
        "40x4+0+0",
        "-e",
        "sh",
        "-c",
        "printf 'DRAGME_TEXT\\n'; exec sleep 600",
      ]);
      await x.windowByName("Drag");
      // Until sh has printed the line, a drag selects nothing: drag again.
      const selected = await waitFor(async () => {
        await desktop.ok("mouse_drag", {
          from: { x: 3, y: 8 },
          to: { x: 200, y: 8 },
          coordinates: "screen",
        });
        return await x.run("xclip", ["-o", "-selection", "primary"])
          .catch(() => "");
      }, (text) => text.includes("DRAGME_TEXT"));
      assert.equal(selected.trim(), "DRAGME_TEXT");
    } finally {
      await desktop.close();
      await x.close();
    }
  },
});

Deno.test({
  name:
    "desktop: a region screenshot shows the pixels X clients drew (PNG exact, JPEG close)",
  ignore: xTestIgnore,
  sanitizeResources: false,
  async fn() {
    await regionPixels([]);
    // Without MIT-SHM (as on a remote display): the XGetImage path, same pixels.
    await regionPixels(["-extension", "MIT-SHM"]);
  },
});

async function regionPixels(xvfbArgs: string[]): Promise<void> {
  const x = await startXvfb("1280x800", xvfbArgs);
  const desktop = await startDesktop(x.display);
  try {
    // A red xterm at +100+100 on the black root (Xvfb -br).
    x.spawn("xterm", [
      "-bg",
      "#ff0000",
      "-T",
      "Red",
      "-geometry",
      "20x6+100+100",
      "-e",
      "sleep",
      "600",
    ]);
    const id = await x.windowByName("Red");
    const info = await x.run("xwininfo", ["-id", id]);
    const left = Number(info.match(/Absolute upper-left X:\s+(\d+)/)?.[1]);
    const top = Number(info.match(/Absolute upper-left Y:\s+(\d+)/)?.[1]);
    const height = Number(info.match(/Height:\s+(\d+)/)?.[1]);
    // 40×20 pixels: 20 of black root left of the window, 20 inside its bottom (no text there).
    const region = {
      x: left - 20,
      y: top + height - 25,
      width: 40,
      height: 20,
    };
    const png = await desktop.call("screenshot", { region, format: "png" });
    assert.ok(!png.isError);
    const image = png.content.find((block) => block.type === "image");
    assert.equal(image?.mimeType, "image/png");
    const decoded = decodePng(
      Uint8Array.from(atob(image?.data ?? ""), (c) => c.charCodeAt(0)),
    );
    assert.equal(decoded.width, 40);
    assert.equal(decoded.height, 20);
    const channels = decoded.channels;
    const pixel = (
      px: number,
      py: number,
    ) => [
      ...decoded.data.slice(
        (py * 40 + px) * channels,
        (py * 40 + px) * channels + 3,
      ),
    ];
    assert.deepEqual(pixel(5, 10), [0, 0, 0], "root is black");
    assert.deepEqual(pixel(30, 10), [255, 0, 0], "inside the red window");
    assert.equal(png.structuredContent?.scale, 1);
    const capture = JSON.stringify((await desktop.host.health()).details);
    assert.match(
      capture,
      xvfbArgs.includes("MIT-SHM")
        ? /"capture":"xgetimage"/
        : /"capture":"mit-shm"/,
    );

    const jpg = await desktop.call("screenshot", { region });
    const jpegBlock = jpg.content.find((block) => block.type === "image");
    assert.equal(jpegBlock?.mimeType, "image/jpeg");
    const rgba = jpeg.decode(
      Uint8Array.from(atob(jpegBlock?.data ?? ""), (c) => c.charCodeAt(0)),
      { useTArray: true },
    );
    const at = (
      px: number,
      py: number,
    ) => [...rgba.data.slice((py * 40 + px) * 4, (py * 40 + px) * 4 + 3)];
    const [r, g, b] = at(32, 10);
    assert.ok(r > 220 && g < 40 && b < 40, `red in the JPEG: ${at(32, 10)}`);
    const [r0, g0, b0] = at(3, 10);
    assert.ok(
      r0 < 30 && g0 < 30 && b0 < 30,
      `black in the JPEG: ${at(3, 10)}`,
    );

    const off = await desktop.call("screenshot", {
      region: { x: 1270, y: 0, width: 20, height: 20 },
    });
    assert.ok(off.isError);
    assert.match(
      off.content[0].text ?? "",
      /not inside the screen \(1280×800\)/,
    );
  } finally {
    await desktop.close();
    await x.close();
  }
}
