// Picks the Desktop backend for this OS and opens it with its clipboard.
// Opening checks the display and permissions: a failure says how to fix it.
// Only this OS's backend (and its FFI bindings) is imported, and the X11 one
// only when a display is named: idle memory on headless machines.

import type { DesktopControlConfig } from "../config.ts";
import { type Clipboard, type Desktop, displayNotSet } from "./port.ts";
import { CommandClipboard } from "./clipboard_command.ts";
import { lazy } from "../../../platform/lazy.ts";

export interface OpenedDesktop {
  desktop: Desktop;
  clipboard: Clipboard;
}

export async function openDesktop(
  config: DesktopControlConfig,
  env: Readonly<Record<string, string>>,
): Promise<OpenedDesktop> {
  const os = Deno.build.os;
  // macOS and Windows backends are untested (no such machine in CI): AGENTS.md says so.
  if (os === "darwin") {
    const { DarwinDesktop } = await lazy<typeof import("./darwin.ts")>(
      "./darwin.ts",
      import.meta.url,
    );
    return {
      desktop: DarwinDesktop.open(),
      clipboard: new CommandClipboard(os),
    };
  }
  if (os === "windows") {
    const { Win32Desktop } = await lazy<typeof import("./win32.ts")>(
      "./win32.ts",
      import.meta.url,
    );
    return {
      desktop: Win32Desktop.open(),
      clipboard: new CommandClipboard(os),
    };
  }
  const name = config.display ?? env.DISPLAY;
  if (name === undefined || name === "") throw displayNotSet();
  const [{ X11Desktop }, { X11Clipboard }] = await Promise.all([
    lazy<typeof import("./x11.ts")>(
      "./x11.ts",
      import.meta.url,
    ),
    lazy<typeof import("./x11_clipboard.ts")>(
      "./x11_clipboard.ts",
      import.meta.url,
    ),
  ]);
  const desktop = X11Desktop.open(name);
  const clipboard = new X11Clipboard({
    prefer: config.clipboard,
    display: desktop.display.name,
    env,
    probe: { owner: () => desktop.clipboardOwner() },
  });
  return { desktop, clipboard };
}
