// Keyboard tools: type any text (characters the keymap lacks included),
// press one key, press a combination. Typed text is never logged.

import { z } from "zod";
import { json, toolDefiner } from "../kit/mod.ts";
import type { DesktopControl } from "./control.ts";
import { splitKeys } from "./keys.ts";

const tool = toolDefiner<DesktopControl>();

export const keyboardType = tool({
  name: "keyboard_type",
  title: "Type on keyboard",
  touches: ["desktop-input"],
  description:
    "Type text into the focused window, any characters (accents, symbols, emoji) whatever the keyboard " +
    "layout; \\n presses Enter and \\t Tab.",
  input: z.object({
    text: z.string().min(1).max(100_000).describe("Text to type"),
  }),
  output: z.object({
    typed_chars: z.number().int(),
    remapped_chars: z.number().int(),
  }),
  annotations: { destructiveHint: true },
  handle(ctx, { text }, call) {
    return ctx.act(call, "keyboard_type", { chars: [...text].length }, () => {
      const report = ctx.desktop.typeText(text);
      ctx.noteTyping();
      return json({
        typed_chars: report.chars,
        remapped_chars: report.remapped,
      });
    });
  },
});

export const keyboardPress = tool({
  name: "keyboard_press",
  title: "Press key",
  touches: ["desktop-input"],
  description:
    "Press and release one key: enter, tab, escape, backspace, delete, up, down, left, right, home, end, " +
    "pageup, pagedown, f1-f35, a character, or an X keysym name (XF86AudioMute).",
  input: z.object({
    key: z.string().min(1).max(64).describe("Key name"),
  }),
  output: z.object({ pressed: z.array(z.string()) }),
  annotations: { destructiveHint: true },
  handle(ctx, { key }, call) {
    return ctx.act(call, "keyboard_press", { key }, () => {
      const keys = splitKeys([key]);
      ctx.desktop.pressKeys(keys);
      ctx.noteTyping();
      return json({ pressed: keys });
    });
  },
});

export const keyboardShortcut = tool({
  name: "keyboard_shortcut",
  title: "Press shortcut",
  touches: ["desktop-input"],
  description:
    'Press a key combination: keys held in order, released in reverse. ["ctrl", "shift", "t"] or ' +
    '["ctrl+shift+t"]; modifiers ctrl, shift, alt, super (win/cmd/meta).',
  input: z.object({
    keys: z.array(z.string().min(1).max(64)).min(1).max(8).describe(
      "Keys of the combination",
    ),
  }),
  output: z.object({ pressed: z.array(z.string()) }),
  annotations: { destructiveHint: true },
  handle(ctx, { keys }, call) {
    const names = splitKeys(keys);
    return ctx.act(call, "keyboard_shortcut", { keys: names }, () => {
      ctx.desktop.pressKeys(names);
      ctx.noteTyping();
      return json({ pressed: names });
    });
  },
});
