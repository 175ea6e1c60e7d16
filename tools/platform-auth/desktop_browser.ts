// Opening a URL in the desktop's default browser (RFC 8252: the system
// browser, never an embedded webview).

import { messageOf } from "../../platform/errors.ts";

/** Opens `url` in the desktop's default browser (never an embedded webview, RFC 8252). */
export async function openBrowser(url: string): Promise<string> {
  const os = Deno.build.os;
  const command = os === "darwin"
    ? ["open", url]
    : os === "windows"
    ? ["rundll32", "url.dll,FileProtocolHandler", url]
    : ["xdg-open", url];
  if (
    os === "linux" && !Deno.env.get("DISPLAY") &&
    !Deno.env.get("WAYLAND_DISPLAY")
  ) {
    return "no desktop (DISPLAY unset): open authorization_url yourself";
  }
  try {
    const [program, ...args] = command;
    const child = new Deno.Command(program, {
      args,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    const status = await child.status;
    return status.success ? "opened" : `${program} exited with ${status.code}`;
  } catch (error) {
    return `cannot open a browser: ${messageOf(error)}`;
  }
}
