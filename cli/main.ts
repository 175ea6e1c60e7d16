// agentd's CLI, loaded by main.ts (after the stdio front of `mcp <server>`
// answered, when there is one). Parses the command line, then starts a face
// (serve, mcp <server>, doctor). Exit codes: 0 ok, 1 failed, 2 usage error.

// Each command's module is imported when that command runs (cli/commands.ts),
// so `agentd mcp memory` never reads the daemon's routes, the agent runtime or
// other servers.

import { ConfigError } from "../platform/config_merge.ts";
import { VERSION } from "../platform/version.ts";
import {
  builtinCatalog,
  catalogOf,
  SERVER_IDS,
  type ServerCatalog,
} from "../tools/registry.ts";
import type { AnyServerSpec } from "../tools/kit/mod.ts";
import { FIRST_STEPS, UsageError } from "./args.ts";
import { commands } from "./commands.ts";
import { messageOf } from "../platform/errors.ts";
import type { CliContext } from "./context.ts";
import type { StdioFront } from "./stdio_front.ts";

export interface MainOptions {
  /** The servers this binary runs; the built-in ones unless a test supplies its own. */
  specs?: readonly AnyServerSpec[];
  /** Or a catalog (a test's: the built-in servers, loaded as `serve` loads them, plus its own). */
  servers?: ServerCatalog;
  env?: Record<string, string>;
  print?: (text: string) => void;
  printError?: (text: string) => void;
  /** `mcp <server>` on stdio: the front that answered while this loaded (cli/stdio_front.ts). */
  stdioFront?: StdioFront;
}

function help(catalog: ServerCatalog): string {
  const built = new Set(catalog.ids);
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
  const servers = options.servers ??
    (options.specs ? catalogOf(options.specs) : builtinCatalog);
  const print = options.print ?? ((text: string) => console.log(text));
  const printError = options.printError ??
    ((text: string) => console.error(text));
  const ctx: CliContext = {
    servers,
    env: options.env ?? Deno.env.toObject(),
    print,
    ...(options.stdioFront ? { stdioFront: options.stdioFront } : {}),
  };
  const [command, ...rest] = args;
  try {
    switch (command) {
      case undefined:
      case "help":
      case "--help":
      case "-h":
        print(help(servers));
        return 0;
      case "--version":
      case "-V":
      case "version":
        print(`agentd ${VERSION}`);
        return 0;
      case "serve":
        return await (await commands.serve.load()).runServe(rest, ctx);
      case "mcp":
        return await (await commands.mcp.load()).runMcp(rest, ctx);
      case "doctor":
        return await (await commands.doctor.load()).runDoctor(rest, ctx);
      case "native-host":
        return await (await commands.nativeHost.load()).runNativeHost(
          rest,
          ctx,
        );
      case "service":
        return await (await commands.service.load()).runService(rest, ctx);
      case "ui":
        return await (await commands.ui.load()).runUi(rest, ctx);
      case "approve":
      case "deny":
      case "approvals":
      case "audit":
        return await (await commands.policy.load()).runPolicyCommand(
          command,
          rest,
          ctx,
        );
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
    if (error instanceof ConfigError || await isStartFailure(error)) {
      printError(`agentd: ${messageOf(error)}`);
      return 1;
    }
    throw error;
  }
}

// Already loaded by the command that threw; importing here costs nothing more.
async function isStartFailure(error: unknown): Promise<boolean> {
  const { StartupError } = await commands.boot.load();
  const { ServiceError } = await commands.service.load();
  return error instanceof StartupError || error instanceof ServiceError;
}
