// `agentd native-host install`: writes a launcher for `agentd native-host`
// and the host manifest (allowed_origins pinned to the agentd extension) for
// Chrome, Chromium, Edge and Brave: per-user folders on Linux and macOS, the
// HKCU registry key on Windows.

import { dirname, join, posix, win32 } from "node:path";
import { fileURLToPath } from "node:url";
import {
  commonFlags,
  FIRST_STEPS,
  type FlagSet,
  flagsHelp,
  noArguments,
  parseFlags,
  UsageError,
} from "./args.ts";
import { loadSettings, StartupError } from "./boot.ts";
import type { CliContext } from "./context.ts";
import {
  EXTENSION_ID,
  NATIVE_HOST_NAME,
} from "../platform/native_messaging.ts";
import { PINNED_EXTENSION_ID } from "../tools/in-page/config.ts";

export const BROWSERS = ["chrome", "chromium", "edge", "brave"] as const;
export type BrowserName = typeof BROWSERS[number];

export const installFlags: FlagSet = {
  browser: {
    type: "string",
    value: "A,B",
    help: `Browsers to register with: ${
      BROWSERS.join(", ")
    } or all (default all)`,
  },
  "extension-id": {
    type: "string",
    value: "ID",
    help:
      `Extension allowed to connect (default the pinned ${PINNED_EXTENSION_ID})`,
  },
  dir: {
    type: "string",
    value: "DIR",
    help:
      "Write the manifest into this NativeMessagingHosts folder only (e.g. <profile>/NativeMessagingHosts)",
  },
  ...commonFlags,
};

export const INSTALL_HELP = `Usage: agentd native-host install [flags]

Writes <data dir>/native-host/agentd-native-host (a launcher running
"agentd native-host") and registers it as the native messaging host
"${NATIVE_HOST_NAME}" for the agentd extension: a manifest in each browser's
NativeMessagingHosts folder (Linux, macOS) or a HKCU registry key (Windows).

Flags:
${flagsHelp(installFlags)}

${FIRST_STEPS}`;

/** Where one browser looks for per-user host manifests. */
export interface HostTarget {
  browser: BrowserName;
  /** The manifest file to write. */
  manifest: string;
  /** Windows: the registry key whose default value is the manifest path. */
  registryKey?: string;
}

const LINUX: Record<BrowserName, string> = {
  chrome: ".config/google-chrome",
  chromium: ".config/chromium",
  edge: ".config/microsoft-edge",
  brave: ".config/BraveSoftware/Brave-Browser",
};
const MACOS: Record<BrowserName, string> = {
  chrome: "Library/Application Support/Google/Chrome",
  chromium: "Library/Application Support/Chromium",
  edge: "Library/Application Support/Microsoft Edge",
  brave: "Library/Application Support/BraveSoftware/Brave-Browser",
};
const WINDOWS: Record<BrowserName, string> = {
  chrome: "Software\\Google\\Chrome",
  chromium: "Software\\Chromium",
  edge: "Software\\Microsoft\\Edge",
  brave: "Software\\BraveSoftware\\Brave-Browser",
};

/** Per-OS manifest locations (pure, so every OS can be checked anywhere). */
export function hostTargets(
  os: typeof Deno.build.os,
  home: string,
  dataDir: string,
  browsers: readonly BrowserName[],
): HostTarget[] {
  const file = `${NATIVE_HOST_NAME}.json`;
  return browsers.map((browser) => {
    switch (os) {
      case "windows":
        return {
          browser,
          manifest: win32.join(dataDir, "native-host", browser, file),
          registryKey: `HKCU\\${
            WINDOWS[browser]
          }\\NativeMessagingHosts\\${NATIVE_HOST_NAME}`,
        };
      case "darwin":
        return {
          browser,
          manifest: posix.join(
            home,
            MACOS[browser],
            "NativeMessagingHosts",
            file,
          ),
        };
      default:
        return {
          browser,
          manifest: posix.join(
            home,
            LINUX[browser],
            "NativeMessagingHosts",
            file,
          ),
        };
    }
  });
}

export function hostManifest(launcher: string, extensionId: string): string {
  return JSON.stringify(
    {
      name: NATIVE_HOST_NAME,
      description:
        "agentd: relays the companion extension to the local agentd daemon",
      path: launcher,
      type: "stdio",
      allowed_origins: [`chrome-extension://${extensionId}/`],
    },
    null,
    2,
  ) + "\n";
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** How to start this agentd again: the compiled binary, or deno with this program and its config. */
function selfCommand(): string[] {
  const exe = Deno.execPath();
  const name = exe.split(/[\\/]/).pop() ?? "";
  if (!/^deno(\.exe)?$/.test(name)) return [exe];
  const main = fileURLToPath(Deno.mainModule);
  let dir = dirname(main);
  for (;;) {
    try {
      Deno.statSync(join(dir, "deno.json"));
      return [exe, "run", "-A", "--config", join(dir, "deno.json"), main];
    } catch {
      const up = dirname(dir);
      if (up === dir) return [exe, "run", "-A", main];
      dir = up;
    }
  }
}

/** The launcher the manifest points at: browsers start a path, not a command line. */
export function launcherScript(
  os: typeof Deno.build.os,
  command: string[],
  dataDir: string,
): string {
  if (os === "windows") {
    const quoted = [...command, "native-host", "--data-dir", dataDir].map((
      part,
    ) => `"${part}"`);
    return `@echo off\r\nrem agentd native messaging host (written by agentd native-host install)\r\n${
      quoted.join(" ")
    } %*\r\n`;
  }
  const quoted = [...command, "native-host", "--data-dir", dataDir].map(
    shellQuote,
  );
  return `#!/bin/sh\n# agentd native messaging host (written by agentd native-host install)\nexec ${
    quoted.join(" ")
  } "$@"\n`;
}

function parseBrowsers(value: string | boolean | undefined): BrowserName[] {
  if (typeof value !== "string" || value === "all") return [...BROWSERS];
  const names = value.split(",").map((name) => name.trim()).filter(Boolean);
  const known: readonly string[] = BROWSERS;
  const unknown = names.filter((name) => !known.includes(name));
  if (unknown.length > 0 || names.length === 0) {
    throw new UsageError(
      `unknown browser "${unknown[0] ?? value}" for --browser; use ${
        BROWSERS.join(", ")
      } or all`,
      "native-host install",
    );
  }
  return BROWSERS.filter((name) => names.includes(name));
}

export async function runNativeHostInstall(
  args: string[],
  ctx: CliContext,
): Promise<number> {
  const { values, positionals } = parseFlags(
    "native-host install",
    args,
    installFlags,
  );
  if (values.help === true) {
    ctx.print(INSTALL_HELP);
    return 0;
  }
  noArguments(positionals, "native-host install");
  const browsers = parseBrowsers(values.browser);
  const extensionId = typeof values["extension-id"] === "string"
    ? values["extension-id"]
    : PINNED_EXTENSION_ID;
  if (!EXTENSION_ID.test(extensionId)) {
    throw new UsageError(
      `--extension-id "${extensionId}" is not an extension id (32 letters a-p)`,
      "native-host install",
    );
  }
  const flags: Record<string, unknown> = {};
  if (typeof values["data-dir"] === "string") {
    flags.data_dir = values["data-dir"];
  }
  if (typeof values.config === "string") flags.config = values.config;
  const settings = await loadSettings({
    flags,
    specs: await ctx.servers.load(),
    env: ctx.env,
  });
  const os = Deno.build.os;
  const launcherDir = join(settings.dataDir, "native-host");
  const launcher = join(
    launcherDir,
    os === "windows" ? "agentd-native-host.bat" : "agentd-native-host",
  );
  await Deno.mkdir(launcherDir, { recursive: true });
  await Deno.writeTextFile(
    launcher,
    launcherScript(os, selfCommand(), settings.dataDir),
  );
  if (os !== "windows") await Deno.chmod(launcher, 0o755);
  const manifest = hostManifest(launcher, extensionId);
  const written: string[] = [];
  if (typeof values.dir === "string") {
    await Deno.mkdir(values.dir, { recursive: true });
    const path = join(values.dir, `${NATIVE_HOST_NAME}.json`);
    await Deno.writeTextFile(path, manifest);
    written.push(path);
  } else {
    const home = os === "windows"
      ? ctx.env.USERPROFILE ?? ""
      : ctx.env.HOME ?? "";
    if (home === "" && os !== "windows") {
      throw new StartupError(
        "HOME is not set: cannot find the browsers' folders; pass --dir DIR",
      );
    }
    for (const target of hostTargets(os, home, settings.dataDir, browsers)) {
      await Deno.mkdir(dirname(target.manifest), { recursive: true });
      await Deno.writeTextFile(target.manifest, manifest);
      if (target.registryKey) {
        const result = await new Deno.Command("reg", {
          args: [
            "add",
            target.registryKey,
            "/ve",
            "/t",
            "REG_SZ",
            "/d",
            target.manifest,
            "/f",
          ],
          stdout: "null",
          stderr: "piped",
        }).output();
        if (!result.success) {
          throw new StartupError(
            `Cannot write the registry key ${target.registryKey}: ${
              new TextDecoder().decode(result.stderr).trim()
            }`,
          );
        }
      }
      written.push(
        `${target.browser}: ${target.registryKey ?? target.manifest}`,
      );
    }
  }
  ctx.print(
    `Installed the agentd native messaging host "${NATIVE_HOST_NAME}" for extension ${extensionId}:\n` +
      `  launcher ${launcher}\n` +
      written.map((line) => `  ${line}`).join("\n") +
      "\nReload the extension (or restart the browser) to connect.",
  );
  return 0;
}
