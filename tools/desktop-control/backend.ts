// Picks the Desktop backend for this OS and opens it with its clipboard.
// Opening checks the display and permissions: a failure says how to fix it.

import type { DesktopControlConfig } from "./config.ts";
import type { Clipboard, Desktop } from "./desktop.ts";
import { CommandClipboard } from "./clipboard_command.ts";
import { X11Clipboard } from "./clipboard_x11.ts";
import { DarwinDesktop } from "./desktop_darwin.ts";
import { Win32Desktop } from "./desktop_win32.ts";
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
  // macOS and Windows backends are untested (no such machine in CI): AGENTS.md says so.
  if (os === "darwin") {
    return {
      desktop: DarwinDesktop.open(),
      clipboard: new CommandClipboard(os),
    };
  }
  if (os === "windows") {
    return {
      desktop: Win32Desktop.open(),
      clipboard: new CommandClipboard(os),
    };
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
