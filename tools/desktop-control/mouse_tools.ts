// Mouse tools: move, click, drag. Coordinates are pixels of the caller's
// latest screenshot unless `coordinates: "screen"` says screen pixels.

import { z } from "zod";
import { type CallContext, json, toolDefiner } from "../kit/mod.ts";
import type { DesktopControl } from "./control.ts";
import type { Shot } from "./shots.ts";

const tool = toolDefiner<DesktopControl>();

const coordinates = z.enum(["image", "screen"]).optional().describe(
  'What x/y mean: "image" (default) pixels of the screenshot, "screen" pixels of the screen',
);
const screenshotId = z.string().min(1).max(64).optional().describe(
  "The screenshot whose pixels x/y are (default: your latest)",
);
const PointInput = z.object({
  x: z.number().finite().describe("Horizontal position"),
  y: z.number().finite().describe("Vertical position"),
}).strict();

const Point = z.object({ x: z.number(), y: z.number() });

/** Where the pointer went, in screen pixels, and the screenshot x/y were read in. */
const moved = {
  pointer: Point,
  screenshot_id: z.string().nullable(),
};

function rounded(point: { x: number; y: number }) {
  return { x: Math.round(point.x), y: Math.round(point.y) };
}

/** The screen point of a tool's `x`, `y` (image pixels unless `coordinates` says screen). */
function screenPoint(
  ctx: DesktopControl,
  call: CallContext,
  input: {
    x: number;
    y: number;
    coordinates?: "image" | "screen";
    screenshot_id?: string;
  },
) {
  return ctx.toScreen(
    call,
    rounded(input),
    input.coordinates ?? "image",
    input.screenshot_id,
    "x, y",
  );
}

/** The `moved` part of an answer: where the pointer is now, and the screenshot used. */
function movedTo(ctx: DesktopControl, shot: Shot | undefined) {
  return { pointer: ctx.desktop.pointer(), screenshot_id: shot?.id ?? null };
}

export const mouseMove = tool({
  name: "mouse_move",
  title: "Move mouse",
  touches: [],
  description:
    "Move the pointer to x, y (pixels of your latest screenshot by default).",
  input: z.object({
    x: z.number().finite().describe("Horizontal position"),
    y: z.number().finite().describe("Vertical position"),
    coordinates,
    screenshot_id: screenshotId,
  }),
  output: z.object({ screen: Point, ...moved }),
  annotations: { destructiveHint: false },
  handle(ctx, input, call) {
    const { x, y, coordinates } = input;
    return ctx.act(call, "mouse_move", {
      x,
      y,
      coordinates: coordinates ?? "image",
    }, () => {
      const { screen, shot } = screenPoint(ctx, call, input);
      ctx.desktop.moveMouse(screen);
      return json({ screen, ...movedTo(ctx, shot) });
    });
  },
});

export const mouseClick = tool({
  name: "mouse_click",
  title: "Click mouse",
  touches: ["desktop-input"],
  description:
    "Click at x, y (pixels of your latest screenshot by default) with the left (default) or right button.",
  input: z.object({
    x: z.number().finite().describe("Horizontal position"),
    y: z.number().finite().describe("Vertical position"),
    button: z.enum(["left", "right"]).optional().describe(
      "Mouse button (default left)",
    ),
    coordinates,
    screenshot_id: screenshotId,
  }),
  output: z.object({
    screen: Point,
    button: z.enum(["left", "right"]),
    ...moved,
  }),
  annotations: { destructiveHint: true },
  handle(ctx, input, call) {
    const { x, y, coordinates } = input;
    const which = input.button ?? "left";
    return ctx.act(
      call,
      "mouse_click",
      { x, y, button: which, coordinates: coordinates ?? "image" },
      () => {
        const { screen, shot } = screenPoint(ctx, call, input);
        ctx.desktop.click(screen, which);
        return json({ screen, button: which, ...movedTo(ctx, shot) });
      },
    );
  },
});

export const mouseDrag = tool({
  name: "mouse_drag",
  title: "Drag mouse",
  touches: ["desktop-input"],
  description:
    "Press the left button at `from`, move to `to` in steps, release: selects text, moves windows and items.",
  input: z.object({
    from: PointInput.describe("Start point"),
    to: PointInput.describe("End point"),
    coordinates,
    screenshot_id: screenshotId,
  }),
  output: z.object({ from: Point, to: Point, ...moved }),
  annotations: { destructiveHint: true },
  handle(ctx, { from, to, coordinates, screenshot_id }, call) {
    return ctx.act(
      call,
      "mouse_drag",
      { from, to, coordinates: coordinates ?? "image" },
      async () => {
        const space = coordinates ?? "image";
        const start = ctx.toScreen(
          call,
          rounded(from),
          space,
          screenshot_id,
          "from",
        );
        const end = ctx.toScreen(call, rounded(to), space, screenshot_id, "to");
        await ctx.desktop.drag(start.screen, end.screen, "left");
        return json({
          from: start.screen,
          to: end.screen,
          ...movedTo(ctx, start.shot),
        });
      },
    );
  },
});
