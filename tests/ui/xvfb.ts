// A private X display for tests: Xvfb picks a free display number and tells
// it through -displayfd; X clients (xdotool, import) run against it.

import { lines } from "../helpers.ts";

export interface Display {
  /** `:N` */
  name: string;
  /** Runs an X client on this display; resolves with its stdout. */
  run(command: string, args: string[]): Promise<
    { code: number; stdout: Uint8Array; text: string }
  >;
  [Symbol.asyncDispose](): Promise<void>;
}

export const XVFB_MISSING = (() => {
  try {
    Deno.statSync("/usr/bin/Xvfb");
    return false;
  } catch {
    return true;
  }
})();

/** Skip without Xvfb, except on CI, where it must fail. */
export const displayTestIgnore: boolean = XVFB_MISSING &&
  Deno.env.get("CI") !== "true";

export async function startXvfb(
  width = 1280,
  height = 800,
): Promise<Display> {
  const process = new Deno.Command("Xvfb", {
    args: [
      "-displayfd",
      "1",
      "-screen",
      "0",
      `${width}x${height}x24`,
      "-nolisten",
      "tcp",
      // No reset when the last client leaves: a client connecting during a
      // reset (while a probe like xdotool just left) fails to open the display.
      "-noreset",
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = lines(process.stdout);
  const first = await reader.next();
  if (first.done || !/^\d+$/.test(first.value.trim())) {
    process.kill("SIGTERM");
    await process.status;
    throw new Error("Xvfb did not report a display number");
  }
  const name = `:${first.value.trim()}`;
  void (async () => {
    for await (const _ of { [Symbol.asyncIterator]: () => reader }) {
      // drain until Xvfb exits
    }
  })();
  return {
    name,
    async run(command, args) {
      const output = await new Deno.Command(command, {
        args,
        env: { DISPLAY: name },
        stdin: "null",
        stdout: "piped",
        stderr: "null",
      }).output();
      return {
        code: output.code,
        stdout: output.stdout,
        text: new TextDecoder().decode(output.stdout),
      };
    },
    async [Symbol.asyncDispose]() {
      try {
        process.kill("SIGTERM");
      } catch {
        // already gone
      }
      await process.status;
    },
  };
}
