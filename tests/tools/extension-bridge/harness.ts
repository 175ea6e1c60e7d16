// Real Debian Chromium with the two test extensions loaded (a companion and a
// plain one, copied to a temp dir), and the extension bridge attached to it
// in-process over an SDK client.

import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { basename, join } from "node:path";
import { HEADLESS_CHROMIUM_ARGS } from "../../../platform/browser_discovery.ts";
import { probeDebuggingPort } from "../../../platform/browser.ts";
import { Client } from "../../../platform/mcp_sdk.ts";
import { MemoryStore } from "../../../platform/store/memory.ts";
import { extensionBridgeServer } from "../../../tools/extension-bridge/mod.ts";
import { HostedServer } from "../../../tools/kit/host.ts";
import { connectInProcess } from "../../../tools/kit/transport/sdk_server.ts";
import { CHROMIUM } from "../../browser.ts";
import { capturedLog, freePort, type LogLine, waitFor } from "../../helpers.ts";
import {
  callTool,
  processesWith,
  textOf,
  type ToolCallResult,
} from "../browser-automation/harness.ts";

export { callTool, textOf, type ToolCallResult };

const FIXTURES = fileURLToPath(new URL("./fixtures/", import.meta.url));
/** The companion extension's bridge files, shipped in extension/. */
const COMPANION_FILES = ["agentd_runner.js", "agentd_main.js"].map((name) =>
  fileURLToPath(new URL(`../../../extension/${name}`, import.meta.url))
);

/** Chromium's id of an unpacked extension: SHA-256 of its path, hex digits mapped to a-p. */
export async function extensionIdFor(path: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(path)),
  );
  return [...digest.subarray(0, 16)].map((byte) =>
    String.fromCharCode(97 + (byte >> 4), 97 + (byte & 15))
  ).join("");
}

export interface Extensions {
  dir: string;
  companion: { id: string; path: string; manifest: Record<string, unknown> };
  plain: { id: string; path: string; manifest: Record<string, unknown> };
}

/** Copies the fixtures (plus the bridge's runner into the companion) to a temp dir. */
export async function prepareExtensions(): Promise<Extensions> {
  const dir = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "agentd-ext-" }),
  );
  const copy = async (from: string, to: string) => {
    for await (const entry of Deno.readDir(from)) {
      await Deno.copyFile(join(from, entry.name), join(to, entry.name));
    }
  };
  const one = async (name: string) => {
    const path = join(dir, name);
    await Deno.mkdir(path);
    await copy(join(FIXTURES, name), path);
    const manifest = JSON.parse(
      await Deno.readTextFile(join(path, "manifest.json")),
    );
    return { id: await extensionIdFor(path), path, manifest };
  };
  const companion = await one("companion");
  for (const file of COMPANION_FILES) {
    await Deno.copyFile(file, join(companion.path, basename(file)));
  }
  const plain = await one("plain");
  return { dir, companion, plain };
}

export interface RunningBrowser {
  pid: number;
  port: number;
  /** SIGKILL, as a crash; waits until the port is free. */
  kill(): Promise<void>;
  close(): Promise<void>;
}

/** Debian Chromium with the extensions loaded, debugging on `port`. */
export async function startBrowser(
  port: number,
  extensions: Extensions,
): Promise<RunningBrowser> {
  if (CHROMIUM === undefined) throw new Error("no Chromium to start");
  const profile = await Deno.makeTempDir({ prefix: "agentd-ext-profile-" });
  const paths = `${extensions.companion.path},${extensions.plain.path}`;
  const child = new Deno.Command(CHROMIUM, {
    args: [
      ...HEADLESS_CHROMIUM_ARGS,
      "--enable-unsafe-extension-debugging",
      `--remote-debugging-port=${port}`,
      `--user-data-dir=${profile}`,
      `--load-extension=${paths}`,
      `--disable-extensions-except=${paths}`,
      "about:blank",
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  await waitFor(() => probeDebuggingPort(port), (found) => found !== undefined);
  // Loaded: both extensions' service workers run (they start on install).
  await waitFor(
    async () => {
      const targets: { url: string }[] = await (await fetch(
        `http://127.0.0.1:${port}/json/list`,
      )).json();
      return [extensions.companion.id, extensions.plain.id].every((id) =>
        targets.some((target) =>
          target.url.startsWith(`chrome-extension://${id}/`)
        )
      );
    },
    (loaded) => loaded,
  );
  const gone = async () => {
    await child.status;
    await waitFor(() => processesWith(profile), (pids) => pids.length === 0);
    await waitFor(
      () => probeDebuggingPort(port),
      (found) => found === undefined,
    );
  };
  let closed = false;
  return {
    pid: child.pid,
    port,
    async kill() {
      child.kill("SIGKILL");
      await gone();
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        child.kill("SIGTERM");
      } catch {
        // already gone
      }
      await gone();
      await Deno.remove(profile, { recursive: true }).catch(() => {});
    },
  };
}

export interface Bridge {
  host: HostedServer;
  client: Client;
  logs: LogLine[];
  call(name: string, args?: Record<string, unknown>): Promise<ToolCallResult>;
  /** Calls and asserts success; returns structuredContent. */
  ok(
    name: string,
    args?: Record<string, unknown>,
  ): Promise<Record<string, unknown>>;
  /** The server's health details. */
  details(): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export async function startBridge(
  config: Record<string, unknown>,
): Promise<Bridge> {
  const dataDir = await Deno.makeTempDir({ prefix: "agentd-bridge-" });
  const { log, logs } = capturedLog("debug");
  const store = new MemoryStore();
  const host = await HostedServer.start(extensionBridgeServer, {
    store,
    log,
    config,
    dataDir,
  });
  assert.equal(host.phase.phase, "running", host.phase.state.error);
  const client = new Client({ name: "bridge-test", version: "1.0.0" });
  await client.connect(await connectInProcess(host, {}));
  const call = (name: string, args: Record<string, unknown> = {}) =>
    callTool(client, name, args);
  return {
    host,
    client,
    logs,
    call,
    async ok(name, args = {}) {
      const result = await call(name, args);
      assert.ok(!result.isError, `${name} failed: ${textOf(result)}`);
      return result.structuredContent ?? {};
    },
    async details() {
      const details = (await host.health()).details;
      assert.ok(typeof details === "object" && details !== null);
      return { ...details };
    },
    async close() {
      await client.close();
      await host.stop(5_000);
      await store.close();
      await Deno.remove(dataDir, { recursive: true });
    },
  };
}

/** A local site: /match/ and /other/ pages that show whether a script ran. */
export function startSite(): { url: string; close(): Promise<void> } {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () =>
      new Response(
        "<!doctype html><html><head><title>site</title></head><body><p id=mark>untouched</p></body></html>",
        { headers: { "content-type": "text/html" } },
      ),
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    close: () => server.shutdown(),
  };
}

export { freePort, waitFor };
