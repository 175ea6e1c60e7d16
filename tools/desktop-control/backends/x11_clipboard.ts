// The X11 clipboard (the CLIPBOARD selection) through xclip or xsel: owning
// a selection means answering other clients' requests, so a child process
// owns it (`xclip -quiet` / `xsel --nodetach`) until the next write or stop.

import type { Clipboard } from "./port.ts";
import { printClipboard } from "./clipboard_command.ts";

const TIMEOUT_MS = 5000;

function onPath(name: string, path: string): string | undefined {
  for (const dir of path.split(":")) {
    if (dir === "") continue;
    try {
      const candidate = `${dir}/${name}`;
      if (Deno.statSync(candidate).isFile) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

export interface SelectionProbe {
  /** The window owning the CLIPBOARD selection, 0n for none. */
  owner(): bigint;
}

export class X11Clipboard implements Clipboard {
  readonly via: string;
  readonly available: boolean;
  readonly #tool: { name: "xclip" | "xsel"; path: string } | undefined;
  readonly #env: Record<string, string>;
  readonly #probe: SelectionProbe;
  #owner: Deno.ChildProcess | undefined;

  constructor(options: {
    prefer: "auto" | "xclip" | "xsel";
    display: string;
    env: Readonly<Record<string, string>>;
    probe: SelectionProbe;
  }) {
    const path = options.env.PATH ?? "/usr/local/bin:/usr/bin:/bin";
    const order: ("xclip" | "xsel")[] = options.prefer === "xsel"
      ? ["xsel"]
      : options.prefer === "xclip"
      ? ["xclip"]
      : ["xclip", "xsel"];
    for (const name of order) {
      const found = onPath(name, path);
      if (found) {
        this.#tool = { name, path: found };
        break;
      }
    }
    this.available = this.#tool !== undefined;
    this.via = this.#tool?.name ??
      `none: install ${order.join(" or ")} (apt-get install ${
        order.join(" ")
      })`;
    this.#env = { ...options.env, DISPLAY: options.display };
    this.#probe = options.probe;
  }

  #require(): { name: "xclip" | "xsel"; path: string } {
    if (!this.#tool) {
      throw new Error(
        `No clipboard tool: ${this.via}. The X clipboard needs a process that owns the selection.`,
      );
    }
    return this.#tool;
  }

  async read(): Promise<string> {
    const tool = this.#require();
    if (this.#probe.owner() === 0n) return ""; // nobody owns the clipboard
    const args = tool.name === "xclip"
      ? ["-selection", "clipboard", "-o"]
      : ["--clipboard", "--output"];
    const printed = await printClipboard(tool.path, args, {
      timeoutMs: TIMEOUT_MS,
      env: this.#env,
    });
    if ("failed" in printed) {
      const why = printed.failed;
      // The owner offers no text (an image, files): say so rather than fail.
      if (/target .* not available|cannot convert/i.test(why)) return "";
      throw new Error(`${tool.name} could not read the clipboard: ${why}`);
    }
    return printed.text;
  }

  async write(text: string): Promise<void> {
    const tool = this.#require();
    const before = this.#probe.owner();
    const args = tool.name === "xclip"
      ? ["-selection", "clipboard", "-i", "-quiet"]
      : ["--clipboard", "--input", "--nodetach"];
    const child = new Deno.Command(tool.path, {
      args,
      env: this.#env,
      clearEnv: true,
      stdin: "piped",
      stdout: "null",
      stderr: "null",
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(text));
    await writer.close();
    // Done once the X server names a new owner (ours), not when the tool merely started.
    const deadline = Date.now() + TIMEOUT_MS;
    let exited = false;
    child.status.then(() => exited = true);
    while (true) {
      const owner = this.#probe.owner();
      if (owner !== 0n && owner !== before) break;
      if (exited || Date.now() > deadline) {
        try {
          child.kill("SIGTERM");
        } catch {
          // already gone
        }
        await child.status;
        throw new Error(
          `${tool.name} did not take the clipboard within ${TIMEOUT_MS} ms`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const previous = this.#owner;
    this.#owner = child;
    if (previous) await this.#end(previous);
  }

  async #end(child: Deno.ChildProcess): Promise<void> {
    try {
      child.kill("SIGTERM");
    } catch {
      // it exited when it lost the selection
    }
    await child.status;
  }

  async close(): Promise<void> {
    const owner = this.#owner;
    this.#owner = undefined;
    if (owner) await this.#end(owner);
  }
}
