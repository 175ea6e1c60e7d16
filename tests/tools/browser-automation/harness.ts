// Drives the browser automation server in-process (SDK client over an
// in-memory link) against real Chromium, and checks for leftover browsers.

import assert from "node:assert/strict";
import type { Caller } from "../../../platform/identity.ts";
import { Client } from "../../../platform/mcp_sdk.ts";
import { MemoryStore } from "../../../platform/store/memory.ts";
import { browserAutomationServer } from "../../../tools/browser-automation/mod.ts";
import { HostedServer } from "../../../tools/kit/host.ts";
import { connectInProcess } from "../../../tools/kit/transport/sdk_server.ts";
import { CHROMIUM } from "../../browser.ts";
import { capturedLog, freePort, type LogLine, waitFor } from "../../helpers.ts";

export interface ToolCallResult {
  isError?: boolean;
  content: { type: string; text?: string; data?: string; mimeType?: string }[];
  structuredContent?: Record<string, unknown>;
}

export interface Harness {
  host: HostedServer;
  client: Client;
  logs: LogLine[];
  dataDir: string;
  cdpPort: number;
  call(name: string, args?: Record<string, unknown>): Promise<ToolCallResult>;
  /** Calls and asserts success; returns structuredContent. */
  ok(
    name: string,
    args?: Record<string, unknown>,
  ): Promise<Record<string, unknown>>;
  /** Another client on the same server, as `caller`. */
  connect(caller: Caller): Promise<Client>;
  health(): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<ToolCallResult> {
  const result = await client.callTool({ name, arguments: args });
  const content = Array.isArray(result.content) ? result.content : [];
  return {
    isError: result.isError === true,
    content,
    structuredContent: typeof result.structuredContent === "object" &&
        result.structuredContent !== null
      ? { ...result.structuredContent }
      : undefined,
  };
}

export function textOf(result: ToolCallResult): string {
  return result.content.filter((block) => block.type === "text").map((
    block,
  ) => block.text ?? "").join("\n");
}

export function imagesOf(result: ToolCallResult): Uint8Array[] {
  return result.content.filter((block) =>
    block.type === "image" && block.mimeType === "image/png"
  ).map((block) =>
    Uint8Array.from(atob(block.data ?? ""), (char) => char.charCodeAt(0))
  );
}

const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** Width and height from a PNG's IHDR, after checking the signature. */
export function pngSize(png: Uint8Array): { width: number; height: number } {
  assert.deepEqual([...png.subarray(0, 8)], PNG_MAGIC, "a PNG");
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

export async function startHarness(
  options: {
    config?: Record<string, unknown>;
    dataDir?: string;
    cdpPort?: number;
  } = {},
): Promise<Harness> {
  const dataDir = options.dataDir ??
    await Deno.makeTempDir({ prefix: "agentd-browser-" });
  const cdpPort = options.cdpPort ?? freePort();
  const { log, logs } = capturedLog("info");
  const store = new MemoryStore();
  const host = await HostedServer.start(browserAutomationServer, {
    store,
    log,
    config: {
      cdp_port: cdpPort,
      selector_timeout_ms: 500,
      ...(CHROMIUM ? { executable: CHROMIUM } : {}),
      ...options.config,
    },
    dataDir,
  });
  assert.equal(host.phase.phase, "running", host.phase.state.error);
  const clients: Client[] = [];
  const connect = async (caller: Caller) => {
    const client = new Client({ name: "browser-test", version: "1.0.0" });
    await client.connect(await connectInProcess(host, caller));
    clients.push(client);
    return client;
  };
  const client = await connect({});
  const call = (name: string, args: Record<string, unknown> = {}) =>
    callTool(client, name, args);
  return {
    host,
    client,
    logs,
    dataDir,
    cdpPort,
    call,
    async ok(name, args = {}) {
      const result = await call(name, args);
      assert.ok(!result.isError, `${name} failed: ${textOf(result)}`);
      return result.structuredContent ?? {};
    },
    connect,
    async health() {
      const health = await host.health();
      const details = health.details;
      assert.ok(typeof details === "object" && details !== null);
      return { ...health, details };
    },
    async close() {
      for (const each of clients) await each.close();
      await host.stop(5_000);
      await store.close();
      if (options.dataDir === undefined) {
        await waitNoBrowser(dataDir);
        await Deno.remove(dataDir, { recursive: true });
      }
    },
  };
}

/** Ids of processes whose command line contains `marker` (Linux /proc). */
export async function processesWith(marker: string): Promise<number[]> {
  const pids: number[] = [];
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const cmdline = await Deno.readTextFile(`/proc/${entry.name}/cmdline`);
      if (cmdline.includes(marker)) pids.push(Number(entry.name));
    } catch {
      // exited while we looked
    }
  }
  return pids;
}

/** Whether a process runs (exists and is not a zombie). */
export async function alive(pid: number): Promise<boolean> {
  try {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** Waits until no browser process uses a profile under `dataDir`; fails if one stays. */
export async function waitNoBrowser(dataDir: string): Promise<void> {
  await waitFor(
    () => processesWith(dataDir),
    (pids) => pids.length === 0,
    10_000,
  );
}

/** The browser section of the server's health details. */
export function browserOf(
  health: Record<string, unknown>,
): Record<string, unknown> {
  const details = health.details;
  assert.ok(typeof details === "object" && details !== null);
  const browser = "browser" in details ? details.browser : undefined;
  assert.ok(typeof browser === "object" && browser !== null);
  return { ...browser };
}
