// The window process of `agentd ui`: one native webview on a URL. It runs
// alone because webview_run blocks the thread until the window closes.
//
// `agentd ui` starts it as `agentd ui --window-process <url> <title>`.

import { SizeHint, Webview, WebviewUnavailable } from "../ffi/webview.ts";

/** Starts the stderr line telling `agentd ui` why no window could open (exit 3). */
export const UNAVAILABLE_MARK = "webview unavailable: ";
export const WINDOW_WIDTH = 1280;
export const WINDOW_HEIGHT = 800;

/** Opens the window and blocks until it closes; 3 when no window can open. */
export function openWindow(url: string, title: string): number {
  let view: Webview;
  try {
    view = new Webview({ env: Deno.env.toObject() });
  } catch (error) {
    if (!(error instanceof WebviewUnavailable)) throw error;
    console.error(`${UNAVAILABLE_MARK}${error.message}`);
    return 3;
  }
  view.title = title;
  view.setSize(WINDOW_WIDTH, WINDOW_HEIGHT, SizeHint.none);
  view.navigate(url);
  view.run();
  view.destroy();
  return 0;
}
