// The files that make agentd a per-user service: a systemd user unit on
// Linux, a launchd agent on macOS. Pure text in and out, so every platform's
// file is written and read back the same way on any host.
import { posix } from "node:path";
import { fileURLToPath } from "node:url";

export type ServiceManager = "systemd" | "launchd";

export const SYSTEMD_UNIT = "agentd.service";
export const LAUNCHD_LABEL = "dev.agentd";

/** What the service runs: `command` (executable first) ends with `serve` and its flags. */
export interface ServiceDefinition {
  command: string[];
  /** KEY=VALUE lines the daemon reads at start; secrets stay in this file, never in ours. */
  envFile?: string;
  /** launchd only: where stdout and stderr go (systemd sends them to the journal). */
  logFile?: string;
}

/**
 * How to start this same agentd again: the binary itself when compiled,
 * otherwise the deno that runs us with the flags `deno task start` implies
 * and the absolute main module (`deno run main.ts`).
 */
export function agentdCommand(runtime: {
  standalone: boolean;
  execPath: string;
  mainModule: string;
}): string[] {
  if (runtime.standalone) return [runtime.execPath];
  const main = runtime.mainModule.startsWith("file:")
    ? fileURLToPath(runtime.mainModule)
    : runtime.mainModule;
  return [
    runtime.execPath,
    "run",
    "-A",
    "--unstable-kv",
    "--unstable-no-legacy-abort",
    // The start task's heap setting (bench/README.md: idle and loaded RSS).
    "--v8-flags=--max-semi-space-size=1",
    main,
  ];
}

/** The file that defines the service, from HOME / XDG_CONFIG_HOME as given. */
export function serviceFilePath(
  manager: ServiceManager,
  env: (name: string) => string | undefined,
): string {
  const home = nonEmpty(env("HOME"));
  if (manager === "systemd") {
    const xdg = nonEmpty(env("XDG_CONFIG_HOME"));
    // XDG says relative values are invalid and must be ignored.
    const base = xdg !== undefined && posix.isAbsolute(xdg)
      ? xdg
      : home !== undefined
      ? posix.join(home, ".config")
      : undefined;
    if (base === undefined) {
      throw new Error(
        "cannot find the systemd user unit directory: neither XDG_CONFIG_HOME nor HOME is set",
      );
    }
    return posix.join(base, "systemd", "user", SYSTEMD_UNIT);
  }
  if (home === undefined) {
    throw new Error("cannot find ~/Library/LaunchAgents: HOME is not set");
  }
  return posix.join(home, "Library", "LaunchAgents", `${LAUNCHD_LABEL}.plist`);
}

export function renderServiceFile(
  manager: ServiceManager,
  service: ServiceDefinition,
): string {
  return manager === "systemd"
    ? renderSystemdUnit(service)
    : renderLaunchdPlist(service);
}

export function renderSystemdUnit(service: ServiceDefinition): string {
  const lines = [
    "# Written by `agentd service install`; running it again replaces this file.",
    "[Unit]",
    "Description=agentd: MCP tool servers and agent API",
    "",
    "[Service]",
    "Type=simple",
    `ExecStart=${service.command.map(systemdQuote).join(" ")}`,
  ];
  if (service.envFile !== undefined) {
    lines.push(`EnvironmentFile=${systemdQuote(service.envFile)}`);
  }
  lines.push(
    "Restart=on-failure",
    "RestartSec=2",
    "# agentd logs JSON lines on stderr: journalctl --user -u agentd.service",
    "StandardError=journal",
    "",
    "[Install]",
    "WantedBy=default.target",
    "",
  );
  return lines.join("\n");
}

export function renderLaunchdPlist(service: ServiceDefinition): string {
  // launchd has no EnvironmentFile: a shell reads the file, then becomes agentd.
  const program = service.envFile === undefined ? service.command : [
    "/bin/sh",
    "-c",
    'set -a && . "$0" && set +a && exec "$@"',
    service.envFile,
    ...service.command,
  ];
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    "<!-- Written by `agentd service install`; running it again replaces this file. -->",
    '<plist version="1.0">',
    "<dict>",
    "  <key>Label</key>",
    `  <string>${LAUNCHD_LABEL}</string>`,
    "  <key>ProgramArguments</key>",
    "  <array>",
    ...program.map((arg) => `    <string>${xmlEscape(arg)}</string>`),
    "  </array>",
    "  <key>RunAtLoad</key>",
    "  <true/>",
    "  <key>KeepAlive</key>",
    "  <dict>",
    "    <key>SuccessfulExit</key>",
    "    <false/>",
    "  </dict>",
  ];
  if (service.logFile !== undefined) {
    const log = xmlEscape(service.logFile);
    lines.push(
      "  <key>StandardErrorPath</key>",
      `  <string>${log}</string>`,
      "  <key>StandardOutPath</key>",
      `  <string>${log}</string>`,
    );
  }
  lines.push("</dict>", "</plist>", "");
  return lines.join("\n");
}

/** The program and its arguments as the service file states them. */
export function readServiceCommand(
  manager: ServiceManager,
  text: string,
): string[] | undefined {
  if (manager === "systemd") {
    const line = text.split("\n").find((line) => line.startsWith("ExecStart="));
    return line === undefined
      ? undefined
      : splitSystemdCommand(line.slice("ExecStart=".length));
  }
  const array = text.match(
    /<key>ProgramArguments<\/key>\s*<array>([\s\S]*?)<\/array>/,
  )?.[1];
  if (array === undefined) return undefined;
  return [...array.matchAll(/<string>([\s\S]*?)<\/string>/g)].map((match) =>
    xmlUnescape(match[1] ?? "")
  );
}

/** The flags after `serve` in a service's command. */
export function serveArgsOf(command: readonly string[]): string[] {
  const at = command.lastIndexOf("serve");
  return at === -1 ? [] : command.slice(at + 1);
}

/**
 * One ExecStart word: plain when safe, else double-quoted with C escapes.
 * `%` (specifiers) and `$` (variable expansion) are doubled either way.
 */
export function systemdQuote(word: string): string {
  const escaped = word.replaceAll("%", "%%").replaceAll("$", "$$$$");
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(escaped)) return escaped;
  return `"${
    escaped.replaceAll("\\", "\\\\").replaceAll('"', '\\"')
      .replaceAll("\n", "\\n")
  }"`;
}

/** Splits an ExecStart value written by `systemdQuote` back into words. */
export function splitSystemdCommand(value: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const char = value.charAt(i);
    if (quoted) {
      if (char === '"') quoted = false;
      else if (char === "\\") {
        const next = value.charAt(++i);
        word = (word ?? "") + (next === "n" ? "\n" : next);
      } else word = (word ?? "") + char;
    } else if (char === '"') {
      quoted = true;
      word = word ?? "";
    } else if (char === " " || char === "\t") {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else word = (word ?? "") + char;
  }
  if (word !== undefined) words.push(word);
  return words.map((w) => w.replaceAll("%%", "%").replaceAll("$$", "$"));
}

function xmlEscape(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;").replaceAll('"', "&quot;").replaceAll(
      "'",
      "&apos;",
    );
}

function xmlUnescape(text: string): string {
  return text.replaceAll("&lt;", "<").replaceAll("&gt;", ">")
    .replaceAll("&quot;", '"').replaceAll("&apos;", "'").replaceAll(
      "&amp;",
      "&",
    );
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}
