// The desktop control server (svc-desktop-control): screenshots, mouse,
// keyboard, windows and clipboard of the desktop session through the Desktop
// port (X11 via ffi/x11.ts), and files inside configured roots.

import { defineServer, gatherTools, serviceRuntime } from "../kit/mod.ts";
import { TOOL_LISTINGS } from "./tool_listings.ts";
import { openDesktop } from "./backends/open.ts";
import { localDisplayMissing } from "./backends/display_socket.ts";
import * as clipboard from "./clipboard_tools.ts";
import { DesktopControlConfig } from "./config.ts";
import { DesktopControl } from "./control.ts";
import { DisplayWatch } from "./display_watch.ts";
import * as files from "./file_tools.ts";
import * as keyboard from "./keyboard_tools.ts";
import * as mouse from "./mouse_tools.ts";
import * as screen from "./screen_tools.ts";
import * as windows from "./window_tools.ts";

export { DesktopControlConfig };

/** tools/list order (tests/tools/desktop-control/seed_test.ts pins it); name every tool here. */
const ORDER = [
  "screenshot",
  "mouse_move",
  "mouse_click",
  "mouse_drag",
  "keyboard_type",
  "keyboard_press",
  "keyboard_shortcut",
  "get_window_list",
  "focus_window",
  "get_clipboard",
  "set_clipboard",
  "file_read",
  "file_write",
];

export const desktopControlServer = defineServer<DesktopControl>({
  id: "desktop-control",
  namespace: "svc-desktop-control",
  title: "Desktop control",
  version: "1.0.0",
  instructions:
    "Sees and drives the desktop session: screenshot first, then act with mouse_move, mouse_click, " +
    'mouse_drag (x/y are pixels of your latest screenshot unless coordinates is "screen"), ' +
    "keyboard_type, keyboard_press, keyboard_shortcut; get_window_list and focus_window pick the " +
    "window that receives keys; get_clipboard/set_clipboard; file_read/file_write only inside the " +
    "configured allowed roots.",
  config: DesktopControlConfig,
  listings: TOOL_LISTINGS, // tools/list entries, generated: tools/tool_listings.ts
  tools: gatherTools(ORDER, {
    screen,
    mouse,
    keyboard,
    window: windows,
    clipboard,
    file: files,
  }),
  async start(deps) {
    const config = DesktopControlConfig.parse(deps.config);
    // Throws DesktopUnavailable (no display, refused, missing library): the server stays in error.
    const { desktop, clipboard } = await openDesktop(config, deps.env);
    const control = new DesktopControl(config, {
      desktop,
      clipboard,
      log: deps.log,
      address: deps.address,
    });
    if (config.alert_webhook !== undefined) {
      deps.log.addSecret(config.alert_webhook);
    }
    // A display lost at run time: Error with the reason, an alert, and running again once it reopens.
    const watch = new DisplayWatch({
      check: () => control.check(),
      async reopen() {
        const name = config.display ?? deps.env.DISPLAY;
        const missing = name === undefined
          ? undefined
          : localDisplayMissing(name);
        if (missing !== undefined) throw new Error(missing);
        const opened = await openDesktop(config, deps.env);
        await control.replace(opened);
        deps.log.info("desktop_reopened", {
          platform: opened.desktop.platform,
          ...opened.desktop.health(),
        });
      },
      setPhase: deps.setPhase,
      log: deps.log,
      webhook: config.alert_webhook,
      checkMs: config.display_check_ms,
      retryMs: 500,
      retryMaxMs: config.display_retry_max_ms,
    });
    control.watchLost(() => watch.notice());
    if (desktop.ping) watch.start();
    deps.log.info("desktop_control_ready", {
      platform: desktop.platform,
      ...desktop.health(),
      clipboard: clipboard.via,
      jpeg_encoder: control.encoder.jpegEncoder,
      allowed_roots: config.allowed_roots.length,
    });
    return serviceRuntime(control, {
      async stop() {
        await watch.stop();
        await control.stop();
      },
    });
  },
});
