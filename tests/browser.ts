// Real headless Chromium for page tests: where the browser is, whether to
// skip, launching it with a throwaway profile, and saving screenshots.

import { basename, join } from "node:path";
import puppeteer, { type Browser } from "puppeteer-core";
import { HEADLESS_CHROMIUM_ARGS } from "../platform/browser_discovery.ts";
import { ROOT } from "./helpers.ts";

const CANDIDATES = [
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
  "/usr/bin/google-chrome",
];

function exists(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/** The browser executable: `$CHROMIUM_PATH`, else the first installed candidate. */
export const CHROMIUM: string | undefined = Deno.env.get("CHROMIUM_PATH") ||
  CANDIDATES.find(exists);

/** Skip browser tests without a browser, except on CI, where they must fail. */
export const browserTestIgnore: boolean = CHROMIUM === undefined &&
  Deno.env.get("CI") !== "true";

/** Screenshots and other files a person looks at after a run (git-ignored). */
export const ARTIFACTS_DIR: string = join(ROOT, "artifacts");

/**
 * Launches headless Chromium with a temporary profile. `close()` (or
 * `await using`) also waits for every Chromium process of that profile to
 * exit, kills stragglers, and removes the profile.
 */
export async function launchChromium(): Promise<Browser> {
  if (CHROMIUM === undefined) {
    throw new Error(
      `Cannot launch Chromium: none at ${
        CANDIDATES.join(", ")
      } and CHROMIUM_PATH is unset. ` +
        "Install it (apt-get install chromium; .ci/run does so as root) or set CHROMIUM_PATH.",
    );
  }
  const userDataDir = await Deno.makeTempDir({ prefix: "agentd-chromium-" });
  let browser: Browser;
  try {
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      userDataDir,
      args: [...HEADLESS_CHROMIUM_ARGS],
    });
  } catch (error) {
    await reap(userDataDir);
    throw new Error(`Cannot launch Chromium at ${CHROMIUM}: ${error}`, {
      cause: error,
    });
  }
  const close = browser.close.bind(browser);
  browser.close = async () => {
    try {
      await close();
    } finally {
      await reap(userDataDir);
    }
  };
  return browser;
}

/** Ids of running processes whose command line names the profile (Linux /proc). */
async function processesUsing(userDataDir: string): Promise<number[]> {
  const pids: number[] = [];
  try {
    for await (const entry of Deno.readDir("/proc")) {
      if (!/^\d+$/.test(entry.name)) continue;
      try {
        const cmdline = await Deno.readTextFile(`/proc/${entry.name}/cmdline`);
        if (cmdline.includes(userDataDir)) pids.push(Number(entry.name));
      } catch {
        // exited while we looked
      }
    }
  } catch {
    // no /proc: nothing to check
  }
  return pids;
}

/** Polls until no process uses the profile or `ms` pass; returns the survivors. */
async function waitGone(userDataDir: string, ms: number): Promise<number[]> {
  const deadline = Date.now() + ms;
  let pids = await processesUsing(userDataDir);
  while (pids.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    pids = await processesUsing(userDataDir);
  }
  return pids;
}

/**
 * Kills what still runs from `dir` (a daemon's data dir: the browser a
 * SIGKILLed daemon launched outlives it, and would hold a core for the rest of
 * the suite).
 */
export async function killProcessesUsing(dir: string): Promise<void> {
  for (const pid of await processesUsing(dir)) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  await waitGone(dir, 5_000);
}

/** Waits up to 5 s for the profile's processes to exit, kills the rest, removes the profile. */
async function reap(userDataDir: string): Promise<void> {
  for (const pid of await waitGone(userDataDir, 5_000)) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  await waitGone(userDataDir, 1_000);
  await Deno.remove(userDataDir, { recursive: true }).catch(() => {});
}

/** Writes `bytes` to `artifacts/<name>` and returns the path. */
export async function saveArtifact(
  name: string,
  bytes: Uint8Array,
): Promise<string> {
  if (name === "" || basename(name) !== name) {
    throw new Error(
      `Cannot save artifact "${name}": expected a plain file name`,
    );
  }
  await Deno.mkdir(ARTIFACTS_DIR, { recursive: true });
  const path = join(ARTIFACTS_DIR, name);
  await Deno.writeFile(path, bytes);
  return path;
}
