// The desktop-control config section; its scalar keys are also
// `agentd mcp desktop-control` flags (`max_long_side` → `--max-long-side`).

import { z } from "zod";

const MIB = 1024 * 1024;

export const DesktopControlConfig = z.object({
  display: z.string().min(1).optional()
    .describe("X display to control (default: $DISPLAY)"),
  allowed_roots: z.array(z.string().min(1)).default([])
    .describe(
      "Directories file_read/file_write may use; none (the default) refuses every file call",
    ),
  max_read_bytes: z.number().int().min(1).max(256 * MIB).default(10 * MIB)
    .describe("Largest file file_read returns"),
  max_write_bytes: z.number().int().min(1).max(256 * MIB).default(10 * MIB)
    .describe("Largest content file_write accepts (UTF-8 bytes)"),
  max_long_side: z.number().int().min(64).max(16384).default(1280)
    .describe("Screenshots are scaled down so their long side is at most this"),
  screenshot_format: z.enum(["jpeg", "png"]).default("jpeg")
    .describe("Format of a screenshot call without format"),
  jpeg_quality: z.number().int().min(1).max(100).default(80)
    .describe("JPEG quality of screenshots"),
  turbojpeg: z.boolean().default(true)
    .describe("Encode JPEG with the system's libturbojpeg when present"),
  clipboard: z.enum(["auto", "xclip", "xsel"]).default("auto")
    .describe("X11 clipboard tool (auto: xclip, else xsel)"),
  alert_webhook: z.url({ protocol: /^https?$/ }).optional()
    .describe(
      "URL that receives a JSON POST when the desktop is lost and when it is back",
    ),
  display_check_ms: z.number().int().min(100).max(600_000).default(2_000)
    .describe(
      "How often a running desktop's display is checked (one X round trip)",
    ),
  display_retry_max_ms: z.number().int().min(1_000).max(600_000)
    .default(30_000)
    .describe(
      "Longest wait between attempts to open a lost display again (doubling from 0.5 s)",
    ),
  allow_remote: z.boolean().default(false)
    .describe(
      "Serve tool calls while the process listens off loopback (refused by default)",
    ),
});
export type DesktopControlConfig = z.output<typeof DesktopControlConfig>;

/** What the start says when no display is named (backends/port.ts throws it). */
export const DISPLAY_NOT_SET =
  "DISPLAY is not set: there is no X display to control. Run agentd inside a desktop session, " +
  "or start an X server (e.g. `Xvfb :99 &`) and set DISPLAY=:99 (or the desktop-control " +
  "config key `display`).";

/** What the start says when the X display `name` does not answer (backends/x11_display.ts, preflight.ts). */
export function displayUnreachable(name: string): string {
  return `Cannot open X display "${name}": no X server answers there, or it refuses this client. ` +
    "Check that the X server runs and DISPLAY is right, and that this user may connect " +
    "(XAUTHORITY pointing at the session's cookie, or `xhost +si:localuser:$USER`).";
}
