// Command-line grammar: commands, their flags, help text, and usage errors
// (exit code 2) that name the offending word.

import { parseArgs } from "node:util";
import { messageOf } from "../platform/errors.ts";

export class UsageError extends Error {
  override name = "UsageError";
  constructor(message: string, readonly command?: string) {
    super(message);
  }
}

export type FlagType = "string" | "boolean";

export interface FlagSpec {
  type: FlagType;
  /** Shown in --help. */
  help: string;
  /** Shown in --help as the value's name, e.g. `DIR`. */
  value?: string;
}

export type FlagSet = Record<string, FlagSpec>;

export const commonFlags: FlagSet = {
  config: {
    type: "string",
    value: "FILE",
    help: "Config file (default: <config dir>/agentd.json)",
  },
  "data-dir": {
    type: "string",
    value: "DIR",
    help: "Where stores and profiles live",
  },
  store: {
    type: "string",
    value: "URL",
    help:
      "postgres://… to share state with other daemons (default: <data dir>/store.kv)",
  },
  "log-level": {
    type: "string",
    value: "LEVEL",
    help: "debug, info, warn or error (default info)",
  },
  help: { type: "boolean", help: "Show this help" },
};

export const serveFlags: FlagSet = {
  host: {
    type: "string",
    value: "HOST",
    help: "Address to bind (default 127.0.0.1)",
  },
  port: {
    type: "string",
    value: "N",
    help: "Port to listen on (default 8765)",
  },
  servers: {
    type: "string",
    value: "A,B",
    help: "Servers to enable (default: every built-in server)",
  },
  ...commonFlags,
};

export const mcpFlags: FlagSet = {
  port: {
    type: "string",
    value: "N",
    help: "Serve streamable HTTP at /mcp on this port instead of stdio",
  },
  host: {
    type: "string",
    value: "HOST",
    help: "Address to bind with --port (default 127.0.0.1)",
  },
  ...commonFlags,
};

export const doctorFlags: FlagSet = { ...commonFlags };

/** `service install`: the serve flags the unit passes on, plus the service's own. */
export const serviceInstallFlags: FlagSet = {
  ...serveFlags,
  "env-file": {
    type: "string",
    value: "FILE",
    help: "KEY=VALUE file the service reads (AGENTD_TOKEN, API keys)",
  },
  "no-start": {
    type: "boolean",
    help: "Write the service file only; do not enable or start it",
  },
};

/** `service uninstall` and `service status`. */
export const serviceFlags: FlagSet = {
  help: { type: "boolean", help: "Show this help" },
};

export interface ParsedFlags {
  values: Record<string, string | boolean>;
  positionals: string[];
}

/** Parses `args` strictly against `flags`; unknown flags and missing values are UsageErrors. */
export function parseFlags(
  command: string,
  args: string[],
  flags: FlagSet,
): ParsedFlags {
  const options: Record<string, { type: FlagType }> = {};
  for (const [name, spec] of Object.entries(flags)) {
    options[name] = { type: spec.type };
  }
  try {
    const { values, positionals } = parseArgs({
      args,
      options,
      strict: true,
      allowPositionals: true,
    });
    const out: Record<string, string | boolean> = {};
    for (const [name, value] of Object.entries(values)) {
      if (typeof value === "string" || typeof value === "boolean") {
        out[name] = value;
      }
    }
    return { values: out, positionals };
  } catch (error) {
    throw new UsageError(explainParseError(command, error), command);
  }
}

function explainParseError(command: string, error: unknown): string {
  const message = messageOf(error);
  const code = error instanceof Error && "code" in error
    ? String(error.code)
    : "";
  const flag = message.match(/'(-[^' ]+)/)?.[1] ?? "";
  switch (code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return `unknown flag ${flag} for "agentd ${command}"`;
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      return message.includes("argument missing")
        ? `flag ${flag} needs a value`
        : `flag ${flag} takes no value`;
    default:
      return message;
  }
}

/**
 * For a command that takes no arguments: the UsageError naming the first of
 * `positionals`, if any. `topic` is the help topic (the command by default).
 */
export function noArguments(
  positionals: string[],
  command: string,
  topic: string = command,
): void {
  if (positionals.length > 0) {
    throw new UsageError(
      `unexpected argument "${positionals[0]}" for "agentd ${command}"`,
      topic,
    );
  }
}

/** `--data-dir` → `data_dir`, the config key a flag sets. */
export function configKey(flag: string): string {
  return flag.replaceAll("-", "_");
}

/** `data_dir` → `data-dir`. */
export function flagName(key: string): string {
  return key.replaceAll("_", "-");
}

export function flagsHelp(flags: FlagSet): string {
  const rows = Object.entries(flags).map(([name, spec]) => {
    const left = `  --${name}${spec.value ? ` ${spec.value}` : ""}`;
    return `${left.padEnd(28)} ${spec.help}`;
  });
  return rows.join("\n");
}

/** Shown at the end of every help text: the README's path, in short. */
export const FIRST_STEPS = `First steps (README.md, "A first agent with curl"):
  export OPENAI_API_KEY=sk-...    or ANTHROPIC_API_KEY; OPENAI_BASE_URL for others
  agentd serve                    the daemon on http://127.0.0.1:8765
                                  (/dashboard, /docs; "agentd ui" for a window)
  MCP clients: {"url": "http://127.0.0.1:8765/mcp"}, or stdio: agentd mcp <server>
  curl -s http://127.0.0.1:8765/v1/agents -H 'content-type: application/json' \\
    -d '{"name":"helper","model":"openai/gpt-4o-mini"}'
  curl -s http://127.0.0.1:8765/v1/agents/helper/send \\
    -H 'content-type: application/json' -d '{"message":"Hello!"}'`;
