// The clipboard through the OS's own commands: pbcopy/pbpaste on macOS,
// PowerShell's Get-Clipboard/Set-Clipboard on Windows. Untested here.

import type { Clipboard } from "./port.ts";

const TIMEOUT_MS = 10_000;

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
    const output = await new Deno.Command(command, {
      args,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(TIMEOUT_MS),
    }).output();
    if (!output.success) {
      throw new Error(
        `${command} failed: ${new TextDecoder().decode(output.stderr).trim()}`,
      );
    }
    return new TextDecoder().decode(output.stdout);
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
