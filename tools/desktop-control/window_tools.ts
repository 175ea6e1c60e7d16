// Window tools: list top-level windows with titles and geometry, and bring
// one to the front by id or title.

import { z } from "zod";
import { json, toolDefiner, ToolError } from "../kit/mod.ts";
import type { DesktopControl } from "./control.ts";
import type { WindowInfo } from "./backends/port.ts";

const tool = toolDefiner<DesktopControl>();

const WindowOut = z.object({
  id: z.string(),
  title: z.string(),
  app: z.string(),
  pid: z.number().int().nullable(),
  x: z.number(),
  y: z.number(),
  width: z.number(),
  height: z.number(),
  visible: z.boolean(),
  focused: z.boolean(),
});

function windowJson(window: WindowInfo) {
  return { ...window };
}

export const getWindowList = tool({
  name: "get_window_list",
  title: "List windows",
  touches: [],
  description:
    "List the desktop's top-level windows: id, title, application, pid, position and size in screen " +
    "pixels, whether visible and focused. Hidden (minimised, unmapped, untitled) ones only with include_hidden.",
  input: z.object({
    include_hidden: z.boolean().optional().describe(
      "Also list hidden, minimised and untitled windows (default false)",
    ),
  }),
  output: z.object({
    windows: z.array(WindowOut),
    count: z.number().int(),
    focused: z.string().nullable(),
    monitors: z.array(z.object({
      name: z.string(),
      primary: z.boolean(),
      x: z.number(),
      y: z.number(),
      width: z.number(),
      height: z.number(),
    })),
  }),
  annotations: { readOnlyHint: true },
  handle(ctx, { include_hidden }, call) {
    return ctx.act(
      call,
      "get_window_list",
      { include_hidden: include_hidden ?? false },
      () => {
        const windows = ctx.desktop.windows(include_hidden ?? false);
        return json({
          windows: windows.map(windowJson),
          count: windows.length,
          focused: windows.find((window) => window.focused)?.id ?? null,
          monitors: ctx.desktop.monitors().map((monitor) => ({ ...monitor })),
        });
      },
    );
  },
});

/** The window a title names: the exact title, else the one title containing it (any case). */
function windowByTitle(
  windows: readonly WindowInfo[],
  title: string,
): WindowInfo {
  const exact = windows.filter((window) => window.title === title);
  if (exact.length === 1) return exact[0];
  const needle = title.toLowerCase();
  const candidates = exact.length > 1
    ? exact
    : windows.filter((window) => window.title.toLowerCase().includes(needle));
  if (candidates.length === 1) return candidates[0];
  if (candidates.length === 0) {
    throw new ToolError(
      `focus_window failed: no window title contains "${title}"; get_window_list lists them`,
    );
  }
  throw new ToolError(
    `focus_window failed: ${candidates.length} windows match title "${title}": ` +
      candidates.map((window) => `${window.id} "${window.title}"`).join(", ") +
      "; pass window_id",
  );
}

export const focusWindow = tool({
  name: "focus_window",
  title: "Focus window",
  touches: [],
  description:
    "Bring a window to the front and give it the keyboard focus, by window_id (from get_window_list) " +
    "or by title (exact, else the only title containing it, any case).",
  input: z.object({
    window_id: z.string().min(1).max(32).optional().describe(
      "Window id from get_window_list",
    ),
    title: z.string().min(1).max(1024).optional().describe(
      "Window title, or a part of it",
    ),
  }),
  output: z.object({
    focused: z.literal(true),
    via: z.string(),
    // The window as listed, or only its id when it is no longer listed.
    window: z.union([WindowOut, z.object({ id: z.string() })]),
  }),
  annotations: { destructiveHint: false },
  handle(ctx, { window_id, title }, call) {
    if ((window_id === undefined) === (title === undefined)) {
      throw new ToolError(
        "focus_window needs exactly one of window_id or title",
      );
    }
    return ctx.act(
      call,
      "focus_window",
      { window_id: window_id ?? null, title: title ?? null },
      async () => {
        const id = window_id ??
          windowByTitle(ctx.desktop.windows(true), title ?? "").id;
        const { focused, via } = await ctx.desktop.focusWindow(id);
        const window = ctx.desktop.windows(true).find((each) => each.id === id);
        if (!focused) {
          throw new Error(
            `window ${id} did not get the focus (asked via ${via}); the window manager may refuse focus stealing`,
          );
        }
        return json({
          focused: true,
          via,
          window: window ? windowJson(window) : { id },
        });
      },
    );
  },
});
