// Clipboard tools: read and write the desktop's clipboard as text. Only
// lengths are logged, never the text.

import { z } from "zod";
import { json, toolDefiner } from "../kit/mod.ts";
import type { DesktopControl } from "./control.ts";

const tool = toolDefiner<DesktopControl>();

export const getClipboard = tool({
  name: "get_clipboard",
  title: "Read clipboard",
  touches: [],
  description:
    "Read the clipboard's text (empty when it holds nothing or no text).",
  input: z.object({}),
  output: z.object({ text: z.string(), chars: z.number().int() }),
  annotations: { readOnlyHint: true },
  handle(ctx, _args, call) {
    return ctx.act(call, "get_clipboard", {}, async () => {
      const text = await ctx.clipboard.read();
      return json({ text, chars: [...text].length });
    });
  },
});

export const setClipboard = tool({
  name: "set_clipboard",
  title: "Write clipboard",
  touches: ["desktop-input"],
  description:
    "Put text on the clipboard; other applications paste it until something else is copied.",
  input: z.object({
    text: z.string().max(10_000_000).describe("Text to put on the clipboard"),
  }),
  output: z.object({ chars: z.number().int(), via: z.string() }),
  annotations: { destructiveHint: true },
  handle(ctx, { text }, call) {
    return ctx.act(
      call,
      "set_clipboard",
      { chars: [...text].length },
      async () => {
        await ctx.clipboard.write(text);
        return json({ chars: [...text].length, via: ctx.clipboard.via });
      },
    );
  },
});
