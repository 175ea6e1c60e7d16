// Shared by the `agentd ui` tests: running the CLI with a chosen environment
// (no inherited DISPLAY), and a fake browser opener that records its argument.

import { join } from "node:path";
import { FIXTURE_CLI, ROOT } from "../helpers.ts";

export const UI_TOKEN = "ui-test-token-0123456789abcdef";

/** The test process's environment without any display. */
export function headlessEnv(): Record<string, string> {
  const env = Deno.env.toObject();
  delete env.DISPLAY;
  delete env.WAYLAND_DISPLAY;
  return { ...env, NO_COLOR: "1" };
}

/** A bin dir whose `xdg-open` (and `open`) appends its arguments to `record`. */
export async function fakeOpener(dir: string): Promise<
  { bin: string; record: string; opened(): Promise<string[]> }
> {
  const bin = join(dir, "bin");
  const record = join(dir, "opened.txt");
  await Deno.mkdir(bin, { recursive: true });
  const script = `#!/bin/sh\nprintf '%s\\n' "$@" >> '${record}'\n`;
  for (const name of ["xdg-open", "open"]) {
    await Deno.writeTextFile(join(bin, name), script, { mode: 0o755 });
  }
  return {
    bin,
    record,
    async opened() {
      try {
        return (await Deno.readTextFile(record)).split("\n").filter(Boolean);
      } catch {
        return [];
      }
    },
  };
}

/** `agentd ui <args>` as a child process with exactly `env`. */
export function spawnUi(
  args: string[],
  env: Record<string, string>,
): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", FIXTURE_CLI, "ui", ...args],
    cwd: ROOT,
    clearEnv: true,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** Reads a child's stdout and stderr whole, with its status. */
export async function finished(
  child: Deno.ChildProcess,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await child.output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/** The cookie a login response sets, as `name=value`. */
export function cookieOf(response: Response): string {
  const header = response.headers.get("set-cookie") ?? "";
  return header.split(";")[0] ?? "";
}
