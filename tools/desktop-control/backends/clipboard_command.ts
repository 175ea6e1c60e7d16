// The clipboard through the OS's own commands: pbcopy/pbpaste on macOS,
// PowerShell's Get-Clipboard/Set-Clipboard on Windows (untested here); and
// printClipboard, the read that x11_clipboard.ts uses too (tested there).

import type { Clipboard } from "./port.ts";

const TIMEOUT_MS = 10_000;

/**
 * Runs a command that prints the clipboard: its text, or what it said on
 * stderr when it failed. `env`, when given, is its whole environment.
 */
export async function printClipboard(
  command: string,
  args: string[],
  options: { timeoutMs: number; env?: Record<string, string> },
): Promise<{ text: string } | { failed: string }> {
  const output = await new Deno.Command(command, {
    args,
    ...(options.env === undefined ? {} : { env: options.env, clearEnv: true }),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(options.timeoutMs),
  }).output();
  const decoder = new TextDecoder();
  return output.success
    ? { text: decoder.decode(output.stdout) }
    : { failed: decoder.decode(output.stderr).trim() };
}

export class CommandClipboard implements Clipboard {
  readonly via: string;
  readonly available = true;
  readonly #read: [string, string[]];
  readonly #write: [string, string[]];

  constructor(os: "darwin" | "windows") {
    if (os === "darwin") {
      this.via = "pbcopy/pbpaste";
      this.#read = ["pbpaste", []];
      this.#write = ["pbcopy", []];
    } else {
      this.via = "powershell";
      const shell = "powershell.exe";
      const flags = ["-NoProfile", "-NonInteractive", "-Command"];
      this.#read = [shell, [
        ...flags,
        "[Console]::OutputEncoding=[Text.Encoding]::UTF8; Get-Clipboard -Raw",
      ]];
      this.#write = [shell, [
        ...flags,
        "[Console]::InputEncoding=[Text.Encoding]::UTF8; Set-Clipboard -Value ([Console]::In.ReadToEnd())",
      ]];
    }
  }

  async read(): Promise<string> {
    const [command, args] = this.#read;
    const printed = await printClipboard(command, args, {
      timeoutMs: TIMEOUT_MS,
    });
    if ("failed" in printed) {
      throw new Error(`${command} failed: ${printed.failed}`);
    }
    return printed.text;
  }

  async write(text: string): Promise<void> {
    const [command, args] = this.#write;
    const child = new Deno.Command(command, {
      args,
      stdin: "piped",
      stdout: "null",
      stderr: "piped",
      signal: AbortSignal.timeout(TIMEOUT_MS),
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(text));
    await writer.close();
    const output = await child.output();
    if (!output.success) {
      throw new Error(
        `${command} failed: ${new TextDecoder().decode(output.stderr).trim()}`,
      );
    }
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
