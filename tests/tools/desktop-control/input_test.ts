// Keyboard and windows on a real X server: the window list matches what
// xdotool sees, focus_window gives the X input focus, keyboard_type writes a
// file through a real shell in xterm (unicode included), shortcuts reach it.

import assert from "node:assert/strict";
import { join } from "node:path";
import { waitFor } from "../../helpers.ts";
import { startDesktop, startXvfb, xTestIgnore } from "./xvfb.ts";

async function fileText(path: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch {
    return "";
  }
}

Deno.test({
  name:
    "desktop: window list, focus, typing unicode into xterm, shortcuts and keys",
  ignore: xTestIgnore,
  sanitizeResources: false,
  async fn() {
    const x = await startXvfb();
    const dir = await Deno.makeTempDir({ prefix: "agentd-desktop-" });
    const desktop = await startDesktop(x.display);
    try {
      x.spawn("xterm", [
        "-u8",
        "-T",
        "Term A",
        "-geometry",
        "80x24+0+0",
        "-e",
        "sh",
        "-c",
        `cd ${dir} && PS1='$ ' exec sh`,
      ]);
      x.spawn("xlogo", ["-geometry", "200x200+900+100"]);
      const term = await x.windowByName("Term A");
      const logo = await x.windowByName("xlogo");

      const list = await desktop.ok("get_window_list");
      const windows = list.windows as {
        id: string;
        title: string;
        x: number;
        y: number;
        width: number;
        height: number;
      }[];
      for (const [id, title] of [[term, "Term A"], [logo, "xlogo"]]) {
        const found = windows.find((w) => BigInt(w.id) === BigInt(id));
        assert.ok(found, `${title} (${id}) listed: ${JSON.stringify(windows)}`);
        assert.equal(found.title, title);
        // xwininfo: the content's absolute origin (inside the border) and size.
        const info = await x.run("xwininfo", ["-id", id]);
        const field = (name: string) =>
          Number(info.match(new RegExp(`${name}:\\s+(-?\\d+)`))?.[1]);
        assert.deepEqual(
          [found.x, found.y, found.width, found.height],
          [
            field("Absolute upper-left X"),
            field("Absolute upper-left Y"),
            field("Width"),
            field("Height"),
          ],
          `${title} geometry as xwininfo sees it`,
        );
      }

      // Focus by id, then by title; the X server's input focus is the judge.
      await desktop.ok("focus_window", {
        window_id: `0x${BigInt(logo).toString(16)}`,
      });
      assert.equal((await x.run("xdotool", ["getwindowfocus"])).trim(), logo);
      const focused = await desktop.ok("focus_window", { title: "term a" });
      assert.equal((focused.window as { title: string }).title, "Term A");
      assert.equal((await x.run("xdotool", ["getwindowfocus"])).trim(), term);

      // Typing: the shell in xterm runs what we typed, unicode included.
      const unicode = "héllo → ✓ Ünï ß 日本";
      const typed = await desktop.ok("keyboard_type", {
        text: `echo '${unicode}' > typed.txt\n`,
      });
      assert.ok((typed.remapped_chars as number) > 0, "some keys were bound");
      await waitFor(
        () => fileText(join(dir, "typed.txt")),
        (text) => text === `${unicode}\n`,
      );

      // A shortcut reaches the window: ctrl+d ends cat's input.
      await desktop.ok("keyboard_type", { text: "cat > cat.txt\nline one\n" });
      await desktop.ok("keyboard_shortcut", { keys: ["ctrl+d"] });
      await desktop.ok("keyboard_type", { text: "echo done > after.txt\n" });
      await waitFor(
        () => fileText(join(dir, "after.txt")),
        (text) => text === "done\n",
      );
      assert.equal(await fileText(join(dir, "cat.txt")), "line one\n");

      // A single key: Enter runs the line.
      await desktop.ok("keyboard_type", { text: "echo pressed > pressed.txt" });
      assert.equal(await fileText(join(dir, "pressed.txt")), "");
      await desktop.ok("keyboard_press", { key: "enter" });
      await waitFor(
        () => fileText(join(dir, "pressed.txt")),
        (text) => text === "pressed\n",
      );

      // Every action is logged with its time; typed text never is.
      const typing = desktop.logs.filter((line) =>
        line.event === "desktop_action" && line.tool === "keyboard_type"
      );
      assert.ok(typing.length >= 4);
      assert.ok(typing.every((line) => !Number.isNaN(Date.parse(line.time))));
      assert.equal(
        typing[0].chars,
        [...`echo '${unicode}' > typed.txt\n`].length,
      );
      assert.ok(!JSON.stringify(desktop.logs).includes("héllo"));

      const unknown = await desktop.call("keyboard_press", {
        key: "NoSuchKey",
      });
      assert.ok(unknown.isError);
      assert.match(unknown.content[0].text ?? "", /Unknown key "NoSuchKey"/);
      const neither = await desktop.call("focus_window", {});
      assert.ok(neither.isError);
      assert.match(neither.content[0].text ?? "", /window_id or title/);
    } finally {
      await desktop.close();
      await x.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
