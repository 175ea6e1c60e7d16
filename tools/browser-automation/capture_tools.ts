// The screenshot tool: PNG image content, written to a file only when asked
// and only inside the allowed directories.

import { dirname } from "node:path";
import { z } from "zod";
import { imageBlock, toolDefiner } from "../kit/mod.ts";
import type { BrowserAutomation } from "./automation.ts";
import { pageState } from "./page_ops.ts";
import { resourceLink } from "./results.ts";
import { screenshotTarget } from "./screenshot_paths.ts";

const tool = toolDefiner<BrowserAutomation>();

/** Width and height from a PNG's IHDR chunk. */
function pngSize(png: Uint8Array): { width: number; height: number } {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

export const screenshot = tool({
  name: "screenshot",
  title: "Take page screenshot",
  touches: ["files-write"],
  argKinds: { path: "path" },
  relativeTo: (ctx) => Promise.resolve(ctx.screenshotDirs[0]),
  description:
    "Take a PNG screenshot of the viewport, or of the whole page with full_page. Returned as an image; also written to path (a .png inside the allowed screenshot directories; relative paths go to the first) when given.",
  input: z.object({
    full_page: z.boolean().optional().describe(
      "The whole scrollable page instead of the viewport (default false)",
    ),
    path: z.string().min(1).max(4096).optional().describe(
      "File to write the PNG to, inside an allowed screenshot directory",
    ),
  }),
  output: z.object({
    url: z.string(),
    title: z.string(),
    width: z.number().int(),
    height: z.number().int(),
    full_page: z.boolean(),
    path: z.string().nullable(),
    bytes: z.number().int(),
    // Over the inline budget: the PNG as a resource of the session.
    resource_uri: z.string().optional(),
  }),
  annotations: { readOnlyHint: true },
  handle(ctx, { full_page, path }, call) {
    return ctx.act(
      call,
      {
        tool: "screenshot",
        log: { full_page: full_page ?? false, path: path ?? null },
        readOnly: true,
      },
      async (page) => {
        let target: string | undefined;
        if (path !== undefined) {
          await ctx.ensureScreenshotDir();
          target = await screenshotTarget(path, ctx.screenshotDirs);
        }
        const png = await page.screenshot({
          type: "png",
          fullPage: full_page ?? false,
        });
        if (target !== undefined) {
          await Deno.mkdir(dirname(target), { recursive: true });
          await Deno.writeFile(target, png);
        }
        const { width, height } = pngSize(png);
        const state = await pageState(page);
        const meta = {
          url: state.url,
          title: state.title,
          width,
          height,
          full_page: full_page ?? false,
          path: target ?? null,
          bytes: png.length,
        };
        if (png.length > ctx.config.image_budget) {
          // Too big to inline: a resource of the session, read back whole.
          const stored = ctx.results.put(
            call,
            "screenshot.png",
            "image/png",
            png,
          );
          const kept = { ...meta, resource_uri: stored.uri };
          return {
            content: [
              {
                type: "text",
                text:
                  `Screenshot ${width}x${height} (${png.length} bytes, over the inline budget of ${ctx.config.image_budget}) ` +
                  `stored as ${stored.uri}; read it with resources/read. ${
                    JSON.stringify(kept)
                  }`,
              },
              resourceLink(stored),
            ],
            structuredContent: kept,
          };
        }
        return {
          content: [
            imageBlock(png, "image/png"),
            { type: "text", text: JSON.stringify(meta) },
          ],
          structuredContent: meta,
        };
      },
    );
  },
});
