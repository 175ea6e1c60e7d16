// A real X server for desktop tests: Xvfb on a free display (-displayfd),
// real X clients started by the test, xdotool/xprop/xclip to check what the
// X server saw, and the desktop-control server in-process on that display.

import assert from "node:assert/strict";
import { Client } from "../../../platform/mcp_sdk.ts";
import { MemoryStore } from "../../../platform/store/memory.ts";
import { desktopControlServer } from "../../../tools/desktop-control/mod.ts";
import { HostedServer } from "../../../tools/kit/host.ts";
import { connectInProcess } from "../../../tools/kit/transport/sdk_server.ts";
import { capturedLog, lines, type LogLine, waitFor } from "../../helpers.ts";

const XVFB = "/usr/bin/Xvfb";

function installed(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/** Skip X tests without Xvfb, except on CI, where they must fail. */
export const xTestIgnore: boolean = !installed(XVFB) &&
  Deno.env.get("CI") !== "true";

export interface XServer {
  display: string;
  /** Runs an X client on this display until it exits; returns its stdout. */
  run(command: string, args: string[], stdin?: string): Promise<string>;
  /** Starts an X client that keeps running (killed at close). */
  spawn(
    command: string,
    args: string[],
    options?: { stdout?: "piped" | "null"; env?: Record<string, string> },
  ): Deno.ChildProcess;
  /** The window id xdotool finds for a title, once the window is mapped. */
  windowByName(name: string): Promise<string>;
  close(): Promise<void>;
}

export async function startXvfb(
  size = "1280x800",
  extraArgs: string[] = [],
): Promise<XServer> {
  if (!installed(XVFB)) {
    throw new Error(
      `Xvfb is not installed (${XVFB}): apt-get install xvfb (.ci/run does so as root)`,
    );
  }
  const server = new Deno.Command(XVFB, {
    args: [
      "-displayfd",
      "1",
      "-nolisten",
      "tcp",
      // No reset when the last client leaves: a client connecting during a
      // reset (while a probe like xdotool just left) fails to open the display.
      "-noreset",
      "-br",
      "-screen",
      "0",
      `${size}x24`,
      ...extraArgs,
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const reader = lines(server.stdout);
  const first = await reader.next();
  if (first.done) throw new Error("Xvfb exited before naming its display");
  const display = `:${first.value.trim()}`;
  // Keep draining so Xvfb never blocks on a full pipe.
  (async () => {
    for await (const _ of reader) { /* ignore */ }
  })();
  const children: Deno.ChildProcess[] = [];
  const env = { DISPLAY: display, LANG: "C.UTF-8", PATH: "/usr/bin:/bin" };
  const run = async (command: string, args: string[], stdin?: string) => {
    const child = new Deno.Command(command, {
      args,
      env,
      stdin: stdin === undefined ? "null" : "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    if (stdin !== undefined) {
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode(stdin));
      await writer.close();
    }
    const output = await child.output();
    const text = new TextDecoder().decode(output.stdout);
    if (!output.success) {
      throw new Error(
        `${command} ${args.join(" ")} failed: ${
          new TextDecoder().decode(output.stderr)
        }`,
      );
    }
    return text;
  };
  return {
    display,
    run,
    spawn(command, args, options = {}) {
      const child = new Deno.Command(command, {
        args,
        env: { ...env, ...options.env },
        stdin: "null",
        stdout: options.stdout ?? "null",
        stderr: "null",
      }).spawn();
      children.push(child);
      return child;
    },
    async windowByName(name) {
      const found = await waitFor(
        () =>
          run("xdotool", ["search", "--onlyvisible", "--name", `^${name}$`])
            .catch(() => ""),
        (text) => text.trim() !== "",
        // Generous: X clients start slowly when CI's two cores are busy.
        30_000,
      );
      return found.trim().split("\n")[0];
    },
    async close() {
      for (const child of children) {
        try {
          child.kill("SIGKILL");
        } catch {
          // already gone
        }
        await child.status;
      }
      server.kill("SIGTERM");
      await server.status;
    },
  };
}

export interface ToolCallResult {
  isError?: boolean;
  content: { type: string; text?: string; data?: string; mimeType?: string }[];
  structuredContent?: Record<string, unknown>;
}

export interface DesktopHarness {
  host: HostedServer;
  client: Client;
  logs: LogLine[];
  call(name: string, args?: Record<string, unknown>): Promise<ToolCallResult>;
  ok(
    name: string,
    args?: Record<string, unknown>,
  ): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export function textOf(result: ToolCallResult): string {
  return result.content.filter((block) => block.type === "text")
    .map((block) => block.text ?? "").join("\n");
}

/** The desktop-control server in-process on `display`, with an SDK client over an in-memory link. */
export async function startDesktop(
  display: string | undefined,
  options: {
    config?: Record<string, unknown>;
    address?: () => string | undefined;
  } = {},
): Promise<DesktopHarness> {
  const { log, logs } = capturedLog("info");
  const env: Record<string, string> = { PATH: "/usr/bin:/bin" };
  if (display !== undefined) env.DISPLAY = display;
  const host = await HostedServer.start(desktopControlServer, {
    store: new MemoryStore(),
    log,
    config: options.config ?? {},
    dataDir: "/nonexistent",
    env,
    address: options.address,
  });
  assert.equal(host.phase.phase, "running", host.phase.state.error);
  const client = new Client({ name: "desktop-test", version: "1.0.0" });
  await client.connect(await connectInProcess(host, {}));
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const result = await client.callTool({ name, arguments: args });
    return {
      isError: result.isError === true,
      content: Array.isArray(result.content) ? result.content : [],
      structuredContent: typeof result.structuredContent === "object" &&
          result.structuredContent !== null
        ? { ...result.structuredContent }
        : undefined,
    };
  };
  return {
    host,
    client,
    logs,
    call,
    async ok(name, args = {}) {
      const result = await call(name, args);
      assert.ok(!result.isError, `${name} failed: ${textOf(result)}`);
      assert.ok(result.structuredContent, `${name} has structuredContent`);
      return result.structuredContent;
    },
    async close() {
      await client.close();
      await host.stop(5000);
    },
  };
}
