// agentd: the CLI. Parses the command line, then starts a face
// (serve, mcp <server>, doctor). Exit codes: 0 ok, 1 failed, 2 usage error.

import { ConfigError } from "./platform/config_merge.ts";
import { VERSION } from "./platform/version.ts";
import { builtinServers, SERVER_IDS } from "./tools/registry.ts";
import type { AnyServerSpec } from "./tools/kit/mod.ts";
import { FIRST_STEPS, UsageError } from "./cli/args.ts";
import { messageOf } from "./platform/errors.ts";
import { StartupError } from "./cli/boot.ts";
import type { CliContext } from "./cli/context.ts";
import { runDoctor } from "./cli/doctor.ts";
import { runMcp } from "./cli/mcp.ts";
import { runNativeHost } from "./cli/native_host.ts";
import { runServe } from "./cli/serve.ts";
import { runPolicyCommand } from "./cli/policy.ts";
import { runService, ServiceError } from "./cli/service.ts";
import { runUi } from "./cli/ui.ts";

export interface MainOptions {
  /** The servers this binary runs; the built-in ones unless a test supplies its own. */
  specs?: readonly AnyServerSpec[];
  env?: Record<string, string>;
  print?: (text: string) => void;
  printError?: (text: string) => void;
}

function help(specs: readonly AnyServerSpec[]): string {
  const built = new Set(specs.map((spec) => spec.id));
  const servers = SERVER_IDS.map((id) =>
    `  ${id.padEnd(20)} ${built.has(id) ? "built" : "not built yet"}`
  )
    .join("\n");
  return `agentd ${VERSION}: MCP tool servers and an agent API in one daemon

Usage:
  agentd serve [flags]           Run the daemon (HTTP: /mcp, /mcp/<server>, /admin, /health)
  agentd mcp <server> [flags]    Run one server on stdio, or HTTP with --port
  agentd doctor [flags]          Check this machine and say how to fix problems
  agentd native-host [install]   The browser extension's native messaging host;
                                 install registers it with Chrome/Chromium/Edge/Brave
  agentd ui [flags]              Open the dashboard in a window (starts the daemon if needed)
  agentd service install|uninstall|status
                                 Run the daemon as a systemd/launchd user service
  agentd approve|deny <id>       Answer a tool call waiting for approval
  agentd approvals | audit       List approvals / print the audit trail (JSON lines)
  agentd --version               Print the version
  agentd --help                  Print this help

Servers:
${servers}

Run "agentd <command> --help" for a command's flags.

${FIRST_STEPS}`;
}

export async function main(
  args: string[],
  options: MainOptions = {},
): Promise<number> {
  const specs = options.specs ?? builtinServers;
  const print = options.print ?? ((text: string) => console.log(text));
  const printError = options.printError ??
    ((text: string) => console.error(text));
  const ctx: CliContext = {
    specs,
    env: options.env ?? Deno.env.toObject(),
    print,
  };
  const [command, ...rest] = args;
  try {
    switch (command) {
      case undefined:
      case "help":
      case "--help":
      case "-h":
        print(help(specs));
        return 0;
      case "--version":
      case "-V":
      case "version":
        print(`agentd ${VERSION}`);
        return 0;
      case "serve":
        return await runServe(rest, ctx);
      case "mcp":
        return await runMcp(rest, ctx);
      case "doctor":
        return await runDoctor(rest, ctx);
      case "native-host":
        return await runNativeHost(rest, ctx);
      case "service":
        return await runService(rest, ctx);
      case "ui":
        return await runUi(rest, ctx);
      case "approve":
      case "deny":
      case "approvals":
      case "audit":
        return await runPolicyCommand(command, rest, ctx);
      default:
        throw new UsageError(
          command.startsWith("-")
            ? `unknown flag ${command}`
            : `unknown command "${command}"`,
        );
    }
  } catch (error) {
    if (error instanceof UsageError) {
      const where = error.command
        ? `agentd ${error.command.split(" ")[0]} --help`
        : "agentd --help";
      printError(`agentd: ${error.message}\nRun "${where}" for usage.`);
      return 2;
    }
    // A bad flag value is a usage error; a bad file or env value is not.
    if (
      error instanceof ConfigError &&
      error.problems.every((problem) => problem.startsWith("flag "))
    ) {
      printError(
        `agentd: ${error.message}\nRun "agentd ${command} --help" for usage.`,
      );
      return 2;
    }
    if (
      error instanceof ConfigError || error instanceof StartupError ||
      error instanceof ServiceError
    ) {
      printError(`agentd: ${messageOf(error)}`);
      return 1;
    }
    throw error;
  }
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}
