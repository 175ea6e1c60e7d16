// Per-OS locations for agentd's data and config. Pure functions of an
// injectable OsEnv so every platform can be tested from any host.
import { posix, win32 } from "node:path";

export interface OsEnv {
  os: typeof Deno.build.os;
  env: (name: string) => string | undefined;
  /** Overrides $HOME (or %USERPROFILE% on Windows). */
  home?: string;
}

const APP = "agentd";

function defaultOsEnv(): OsEnv {
  return { os: Deno.build.os, env: (name) => Deno.env.get(name) };
}

/** Empty variables count as unset, as most shells and the XDG spec treat them. */
function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

function requireVar(
  osEnv: OsEnv,
  name: string,
  what: string,
  hint: string,
): string {
  const value = nonEmpty(osEnv.env(name));
  if (value === undefined) {
    throw new Error(
      `cannot determine the agentd ${what} directory: ${name} is not set (set ${name}, or ${hint})`,
    );
  }
  return value;
}

function home(osEnv: OsEnv, what: string, hint: string): string {
  return nonEmpty(osEnv.home) ?? requireVar(osEnv, "HOME", what, hint);
}

/** XDG says relative values are invalid and must be ignored. */
function xdg(osEnv: OsEnv, name: string): string | undefined {
  const value = nonEmpty(osEnv.env(name));
  return value !== undefined && posix.isAbsolute(value) ? value : undefined;
}

/** Where agentd keeps its state (KV stores, caches). */
export function dataDir(osEnv: OsEnv = defaultOsEnv()): string {
  const hint = "pass --data-dir / AGENTD_DATA_DIR";
  switch (osEnv.os) {
    case "windows":
      return win32.join(requireVar(osEnv, "APPDATA", "data", hint), APP);
    case "darwin":
      return posix.join(
        home(osEnv, "data", hint),
        "Library",
        "Application Support",
        APP,
      );
    default: {
      const base = xdg(osEnv, "XDG_DATA_HOME") ??
        posix.join(home(osEnv, "data", hint), ".local", "share");
      return posix.join(base, APP);
    }
  }
}

/** Where agentd looks for agentd.json when no --config is given. */
export function configDir(osEnv: OsEnv = defaultOsEnv()): string {
  const hint = "pass --config / AGENTD_CONFIG";
  switch (osEnv.os) {
    case "windows":
      return win32.join(requireVar(osEnv, "APPDATA", "config", hint), APP);
    case "darwin":
      return posix.join(
        home(osEnv, "config", hint),
        "Library",
        "Application Support",
        APP,
      );
    default: {
      const base = xdg(osEnv, "XDG_CONFIG_HOME") ??
        posix.join(home(osEnv, "config", hint), ".config");
      return posix.join(base, APP);
    }
  }
}
