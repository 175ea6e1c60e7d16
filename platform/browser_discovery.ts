// Finding a browser: the executable to launch, and what listens on a
// debugging port.

import { delimiter, join } from "node:path";

/**
 * Flags for a throwaway headless Chromium (tests, benches): no sandbox (root
 * in containers), no GPU, and no background traffic that skews timings.
 */
export const HEADLESS_CHROMIUM_ARGS: readonly string[] = [
  "--headless=new",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
];

export const BROWSER_NAMES = [
  "chromium",
  "chromium-browser",
  "google-chrome",
  "google-chrome-stable",
  "chrome",
];

const WELL_KNOWN: Partial<Record<typeof Deno.build.os, string[]>> = {
  darwin: [
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
  ],
  windows: [
    "C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe",
    "C:\\Program Files (x86)\\Google\\Chrome\\Application\\chrome.exe",
  ],
};

/** The first Chromium or Chrome on PATH, or in the OS's usual place. */
export function findBrowser(
  env: Readonly<Record<string, string>> = Deno.env.toObject(),
  os: typeof Deno.build.os = Deno.build.os,
): string | undefined {
  const exe = os === "windows" ? ".exe" : "";
  const dirs = (env.PATH ?? env.Path ?? "").split(delimiter).filter(Boolean);
  const candidates = [
    ...dirs.flatMap((dir) =>
      BROWSER_NAMES.map((name) => join(dir, name + exe))
    ),
    ...WELL_KNOWN[os] ?? [],
  ];
  return candidates.find((path) => {
    try {
      return Deno.statSync(path).isFile;
    } catch {
      return false;
    }
  });
}

export interface DebuggingEndpoint {
  /** `Chrome/156.0.…` as the browser reports itself. */
  browser: string;
  webSocketDebuggerUrl: string;
}

/**
 * What listens on the debugging port: a browser's endpoint, or undefined when
 * nothing does. Throws when something else answers there.
 */
export async function probeDebuggingPort(
  port: number,
  timeoutMs = 2_000,
): Promise<DebuggingEndpoint | undefined> {
  const url = `http://127.0.0.1:${port}/json/version`;
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    if (error instanceof DOMException && error.name === "TimeoutError") {
      throw new Error(
        `Port ${port} accepts connections but ${url} did not answer in ${timeoutMs} ms; ` +
          "is another program using the debugging port? Choose another with --cdp-port",
      );
    }
    return undefined; // connection refused: nothing listens
  }
  const body: unknown = await response.json().catch(() => undefined);
  if (
    response.ok && typeof body === "object" && body !== null &&
    "webSocketDebuggerUrl" in body &&
    typeof body.webSocketDebuggerUrl === "string"
  ) {
    const browser = "Browser" in body && typeof body.Browser === "string"
      ? body.Browser
      : "unknown";
    return { browser, webSocketDebuggerUrl: body.webSocketDebuggerUrl };
  }
  throw new Error(
    `Port ${port} is used by a program that is not a browser's debugging endpoint ` +
      `(${url} answered ${response.status}); choose another with --cdp-port`,
  );
}
