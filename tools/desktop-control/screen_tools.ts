// The screenshot tool: the screen or a region, scaled to the configured long
// side, JPEG or PNG, with the facts an agent needs to click on it.

import { z } from "zod";
import { imageBlock, toolDefiner } from "../kit/mod.ts";
import type { DesktopControl } from "./control.ts";
import type { Region } from "./backends/port.ts";
import { downscale } from "./image.ts";

const tool = toolDefiner<DesktopControl>();

const RegionInput = z.object({
  x: z.number().finite().min(0).describe("Left edge, screen pixels"),
  y: z.number().finite().min(0).describe("Top edge, screen pixels"),
  width: z.number().finite().min(1).describe("Width, screen pixels"),
  height: z.number().finite().min(1).describe("Height, screen pixels"),
}).strict();

function within(region: Region, screen: Region): boolean {
  return region.x >= screen.x && region.y >= screen.y &&
    region.x + region.width <= screen.x + screen.width &&
    region.y + region.height <= screen.y + screen.height;
}

export const screenshot = tool({
  name: "screenshot",
  title: "Take screen screenshot",
  touches: [],
  description:
    "Capture the screen, or a region of it, as an image (JPEG by default, PNG on request), scaled down so " +
    "its long side fits the configured limit (default 1280). The result gives the image's id, size and " +
    "scale; mouse tools take x/y in this image's pixels by default.",
  input: z.object({
    region: RegionInput.optional().describe(
      "Area to capture in screen pixels (default: the whole screen)",
    ),
    format: z.enum(["png", "jpeg"]).optional().describe(
      "Image format (default jpeg, or the configured screenshot_format)",
    ),
  }),
  output: z.object({
    id: z.string(),
    format: z.enum(["png", "jpeg"]),
    width: z.number().int(),
    height: z.number().int(),
    bytes: z.number().int(),
    region: z.object({
      x: z.number(),
      y: z.number(),
      width: z.number(),
      height: z.number(),
    }),
    scale: z.number(),
    screen: z.object({ width: z.number(), height: z.number() }),
    coordinates: z.string(),
  }),
  annotations: { readOnlyHint: true },
  handle(ctx, { region, format }, call) {
    const chosen = format ?? ctx.config.screenshot_format;
    return ctx.act(
      call,
      "screenshot",
      { region: region ?? null, format: chosen },
      async () => {
        const screen = ctx.desktop.screen();
        const area: Region = region
          ? {
            x: Math.round(region.x),
            y: Math.round(region.y),
            width: Math.round(region.width),
            height: Math.round(region.height),
          }
          : screen;
        if (!within(area, screen)) {
          throw new Error(
            `region (x ${area.x}, y ${area.y}, ${area.width}×${area.height}) is not inside the screen ` +
              `(${screen.width}×${screen.height})`,
          );
        }
        const pixels = downscale(
          ctx.desktop.capture(area),
          ctx.config.max_long_side,
        );
        const bytes = await ctx.encoder.encode(
          pixels,
          chosen,
          ctx.config.jpeg_quality,
        );
        const shot = ctx.shots.record(
          ctx.session(call),
          area,
          pixels.width,
          pixels.height,
        );
        const mimeType = chosen === "png" ? "image/png" : "image/jpeg";
        const meta = {
          id: shot.id,
          format: chosen,
          width: pixels.width,
          height: pixels.height,
          bytes: bytes.length,
          region: { ...area },
          scale: Number((pixels.width / area.width).toFixed(6)),
          screen: { width: screen.width, height: screen.height },
          coordinates:
            "mouse tools read x/y as pixels of this image (screenshot_id defaults to the latest); " +
            'pass coordinates: "screen" for screen pixels',
        };
        return {
          content: [
            imageBlock(bytes, mimeType),
            { type: "text", text: JSON.stringify(meta) },
          ],
          structuredContent: meta,
        };
      },
    );
  },
});
