// The desktop control tools against the seed, letter for letter: names in
// the seed's order, required and optional parameters as clients see them.

import assert from "node:assert/strict";
import { z } from "zod";
import { desktopControlServer } from "../../../tools/desktop-control/mod.ts";
import { splitKeys } from "../../../tools/desktop-control/keys.ts";
import { imageToScreen } from "../../../tools/desktop-control/shots.ts";
import { downscale, scaledSize } from "../../../tools/desktop-control/image.ts";

const SEED: Record<string, { required: string[]; optional: string[] }> = {
  screenshot: { required: [], optional: ["region", "format"] },
  mouse_move: { required: ["x", "y"], optional: [] },
  mouse_click: { required: ["x", "y"], optional: ["button"] },
  mouse_drag: { required: ["from", "to"], optional: [] },
  keyboard_type: { required: ["text"], optional: [] },
  keyboard_press: { required: ["key"], optional: [] },
  keyboard_shortcut: { required: ["keys"], optional: [] },
  get_window_list: { required: [], optional: ["include_hidden"] },
  // "window_id, or title": both optional, the choice is checked by the handler.
  focus_window: { required: [], optional: ["window_id", "title"] },
  get_clipboard: { required: [], optional: [] },
  set_clipboard: { required: ["text"], optional: [] },
  file_read: { required: ["path"], optional: [] },
  file_write: { required: ["path", "content"], optional: [] },
};

/** Added to the seed's (AGENTS.md says why): which pixel space x/y are in. */
const ADDED: Record<string, string[]> = {
  mouse_move: ["coordinates", "screenshot_id"],
  mouse_click: ["coordinates", "screenshot_id"],
  mouse_drag: ["coordinates", "screenshot_id"],
};

interface Schema {
  properties?: Record<string, { type?: string; enum?: string[] }>;
  required?: string[];
}

Deno.test("desktop control: exactly the seed's thirteen tools with its parameters", () => {
  assert.equal(desktopControlServer.id, "desktop-control");
  assert.equal(desktopControlServer.namespace, "svc-desktop-control");
  assert.deepEqual(
    desktopControlServer.tools.map((tool) => tool.name),
    Object.keys(SEED),
  );
  for (const [name, seed] of Object.entries(SEED)) {
    const tool = desktopControlServer.tools.find((each) => each.name === name);
    assert.ok(tool);
    const schema = z.toJSONSchema(tool.input, { io: "input" }) as Schema;
    assert.deepEqual(
      (schema.required ?? []).toSorted(),
      seed.required.toSorted(),
      name,
    );
    assert.deepEqual(
      Object.keys(schema.properties ?? {}).toSorted(),
      [...seed.required, ...seed.optional, ...(ADDED[name] ?? [])].toSorted(),
      name,
    );
  }
  const shot = desktopControlServer.tools.find((t) => t.name === "screenshot");
  const format =
    (z.toJSONSchema(shot?.input ?? z.object({}), { io: "input" }) as Schema)
      .properties?.format;
  assert.deepEqual(format?.enum, ["png", "jpeg"]);
});

Deno.test("desktop control: key names split into chords; image pixels map to screen pixels", () => {
  assert.deepEqual(splitKeys(["ctrl+shift+T"]), ["ctrl", "shift", "t"]);
  assert.deepEqual(splitKeys(["ctrl", "+"]), ["ctrl", "+"]);
  assert.deepEqual(splitKeys(["ctrl++"]), ["ctrl", "+"]);
  assert.deepEqual(splitKeys(["A"]), ["A"]);
  assert.deepEqual(scaledSize(1920, 1080, 1280), { width: 1280, height: 720 });
  assert.deepEqual(scaledSize(800, 600, 1280), { width: 800, height: 600 });
  const shot = {
    id: "s1",
    region: { x: 100, y: 50, width: 3000, height: 2000 },
    width: 1200,
    height: 800,
  };
  // Each image pixel covers 2.5 screen pixels; its centre is taken.
  assert.deepEqual(imageToScreen(shot, { x: 0, y: 0 }, "x, y"), {
    x: 101,
    y: 51,
  });
  assert.deepEqual(imageToScreen(shot, { x: 1199, y: 799 }, "x, y"), {
    x: 3098,
    y: 2048,
  });
  assert.throws(
    () => imageToScreen(shot, { x: 1200, y: 0 }, "to"),
    /to \(1200, 0\) is outside/,
  );
});

Deno.test("desktop control: downscaling averages each source block (both paths)", () => {
  for (
    const [sw, sh, long] of [[19, 11, 13], [30, 20, 9], [1920, 1080, 1280]]
  ) {
    const stride = sw * 4 + 8; // padded rows, as X images may have
    const data = new Uint8Array(stride * sh);
    for (let i = 0; i < data.length; i++) data[i] = (i * 7919 + (i >> 5)) % 251;
    const image = downscale({ width: sw, height: sh, stride, data }, long);
    const { width: dw, height: dh } = image;
    let worst = 0;
    for (let y = 0; y < dh; y++) {
      const y0 = Math.floor((y * sh) / dh);
      const y1 = Math.max(y0 + 1, Math.floor(((y + 1) * sh) / dh));
      for (let x = 0; x < dw; x++) {
        const x0 = Math.floor((x * sw) / dw);
        const x1 = Math.max(x0 + 1, Math.floor(((x + 1) * sw) / dw));
        for (let c = 0; c < 3; c++) {
          let sum = 0;
          for (let yy = y0; yy < y1; yy++) {
            for (let xx = x0; xx < x1; xx++) {
              sum += data[yy * stride + xx * 4 + c];
            }
          }
          const mean = sum / ((y1 - y0) * (x1 - x0));
          worst = Math.max(
            worst,
            Math.abs(mean - image.data[(y * dw + x) * 4 + c]),
          );
        }
      }
    }
    assert.ok(worst <= 0.5, `${sw}x${sh} → ${dw}x${dh}: off by ${worst}`);
  }
});
