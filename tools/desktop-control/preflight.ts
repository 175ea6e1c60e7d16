// What `serve` knows about the desktop at start without loading this server
// (its tools, the X11 bindings): a display that is not set or not there is
// an `error` in /health from the first request, as the started server would
// say; the server itself loads on the first call.

import type { HostOptions, Preflight } from "../kit/host.ts";
import {
  localDisplayMissing,
  localDisplaySocket,
} from "./backends/display_socket.ts";
import {
  DesktopControlConfig,
  DISPLAY_NOT_SET,
  displayUnreachable,
} from "./config.ts";

export async function preflight(options: HostOptions): Promise<Preflight> {
  const config = DesktopControlConfig.parse(options.config);
  // Only a running server watches the display and posts its alerts.
  if (config.alert_webhook !== undefined) {
    return { start: "alert_webhook is set: the display is watched from now" };
  }
  // macOS and Windows: only their backends know whether the desktop opens.
  if (Deno.build.os !== "linux") return { start: "no check without X11" };
  const env = options.env ?? Deno.env.toObject();
  const name = config.display ?? env.DISPLAY;
  if (name === undefined || name === "") return { error: DISPLAY_NOT_SET };
  const socket = localDisplaySocket(name);
  // A remote display: only XOpenDisplay can judge it.
  if (socket === undefined) return { start: `display "${name}" is remote` };
  // The socket is missing, or left by an X server that died: nobody answers.
  if (localDisplayMissing(name) !== undefined) {
    return { error: displayUnreachable(name) };
  }
  try {
    (await Deno.connect({ transport: "unix", path: socket })).close();
    return undefined;
  } catch {
    return { error: displayUnreachable(name) };
  }
}
