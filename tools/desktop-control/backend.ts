// Picks the Desktop backend for this OS and opens it with its clipboard.
// Opening checks the display and permissions: a failure says how to fix it.

import type { DesktopControlConfig } from "./config.ts";
import { type Clipboard, type Desktop, DesktopUnavailable } from "./desktop.ts";
import { X11Clipboard } from "./clipboard_x11.ts";
import { X11Desktop } from "./desktop_x11.ts";

export interface OpenedDesktop {
  desktop: Desktop;
  clipboard: Clipboard;
}

export function openDesktop(
  config: DesktopControlConfig,
  env: Readonly<Record<string, string>>,
): OpenedDesktop {
  const os = Deno.build.os;
  if (os === "darwin" || os === "windows") {
    throw new DesktopUnavailable(
      `desktop-control has no ${os} backend in this build; it runs on X11 (Linux, BSD)`,
      "platform",
    );
  }
  const name = config.display ?? env.DISPLAY;
  const desktop = X11Desktop.open(name);
  const clipboard = new X11Clipboard({
    prefer: config.clipboard,
    display: desktop.display.name,
    env,
    probe: { owner: () => desktop.clipboardOwner() },
  });
  return { desktop, clipboard };
}
