// `agentd service install|uninstall|status`: `agentd serve` as a per-user
// service, a systemd user unit on Linux and a launchd agent on macOS.

import { passwordIn } from "../platform/store/pg_url.ts";
import { dirname, join, resolve } from "node:path";
import {
  FIRST_STEPS,
  flagsHelp,
  noArguments,
  parseFlags,
  serveFlags,
  serviceFlags,
  serviceInstallFlags,
  UsageError,
} from "./args.ts";
import { selectServers, serveSettings } from "./boot.ts";
import type { CliContext } from "./context.ts";
import { daemonAddress, probeHealth } from "./service_health.ts";
import { messageOf } from "../platform/errors.ts";
import { dataDir as defaultDataDir } from "../platform/paths.ts";
import {
  agentdCommand,
  LAUNCHD_LABEL,
  readServiceCommand,
  renderServiceFile,
  serveArgsOf,
  SYSTEMD_UNIT,
} from "../platform/service_files.ts";
import {
  answer,
  launchdDomain,
  logsHint,
  runLogged,
  runStep,
  runSystemCommand,
  serviceFile,
  serviceManager,
  startSteps,
} from "./service_steps.ts";

export {
  type CommandResult,
  runSystemCommand,
  ServiceError,
  serviceManager,
} from "./service_steps.ts";

export const STATUS_RUNNING = 0;
export const STATUS_STOPPED = 3;
export const STATUS_NOT_INSTALLED = 4;

export const SERVICE_HELP = `Usage: agentd service install [flags]
       agentd service uninstall
       agentd service status

Runs "agentd serve" as a service of the current user: a systemd user unit on
Linux ($XDG_CONFIG_HOME/systemd/user/${SYSTEMD_UNIT}, default ~/.config/...),
a launchd agent on macOS (~/Library/LaunchAgents/${LAUNCHD_LABEL}.plist).
Windows is not supported yet: run "agentd serve" from Task Scheduler.

  install     Write the service file (replacing one already there), then
              enable and start the service. The serve flags below are passed
              on to "agentd serve"; relative paths are made absolute.
  uninstall   Stop and disable the service and remove its file.
  status      Say whether the service is installed and running, and what the
              daemon's /health answers on its port.

Install flags:
${flagsHelp(serviceInstallFlags)}

Secrets never go into the service file: put AGENTD_TOKEN and API keys in a
file (mode 600) and pass --env-file. systemd reads it as EnvironmentFile=;
on macOS /bin/sh sources it before starting agentd (quote values with spaces).

The service runs this executable. Under "deno run" it runs this deno with
"run -A --unstable-kv --unstable-no-legacy-abort <main module> serve ...".

Logs: journalctl --user -u ${SYSTEMD_UNIT} (Linux); <data dir>/logs/agentd.log (macOS).

Exit codes: 0 ok, 1 failed, 2 usage error. status: ${STATUS_RUNNING} running (the
service manager says active, or /health answers on the service's port),
${STATUS_STOPPED} installed but not running, ${STATUS_NOT_INSTALLED} not installed.

AGENTD_SERVICE_PLATFORM=linux|darwin overrides the OS when choosing systemd
or launchd (for tests, or to write a file for another machine).

${FIRST_STEPS}`;

export async function runService(
  args: string[],
  ctx: CliContext,
): Promise<number> {
  const [action, ...rest] = args;
  switch (action) {
    case undefined:
      throw new UsageError(
        "which action? install, uninstall or status",
        "service",
      );
    case "help":
    case "--help":
    case "-h":
      ctx.print(SERVICE_HELP);
      return 0;
    case "install":
      return await install(rest, ctx);
    case "uninstall":
    case "status": {
      const { values, positionals } = parseFlags(
        `service ${action}`,
        rest,
        serviceFlags,
      );
      if (values.help === true) {
        ctx.print(SERVICE_HELP);
        return 0;
      }
      noArguments(positionals, `service ${action}`);
      return action === "status" ? await status(ctx) : await uninstall(ctx);
    }
    default:
      throw new UsageError(
        action.startsWith("-")
          ? `unknown flag ${action} for "agentd service"; expected install, uninstall or status first`
          : `unknown action "${action}"; expected install, uninstall or status`,
        "service",
      );
  }
}

async function install(args: string[], ctx: CliContext): Promise<number> {
  const command = "service install";
  const { values, positionals } = parseFlags(
    command,
    args,
    serviceInstallFlags,
  );
  if (values.help === true) {
    ctx.print(SERVICE_HELP);
    return 0;
  }
  noArguments(positionals, command);
  const manager = serviceManager(ctx.env);

  // The same flags and checks as `agentd serve`, with paths made absolute
  // because the service starts in another directory.
  const serveArgs: string[] = [];
  const chosen: Record<string, string> = {};
  for (const name of Object.keys(serveFlags)) {
    const value = values[name];
    if (name === "help" || typeof value !== "string") continue;
    if (name === "store" && passwordIn(value) !== "") {
      throw new UsageError(
        "--store carries a password, which would be written into the service file; " +
          "put AGENTD_STORE=postgres://… in the --env-file FILE instead",
        command,
      );
    }
    const given = name === "config" || name === "data-dir"
      ? resolve(value)
      : value;
    serveArgs.push(`--${name}`, given);
    chosen[name] = given;
  }
  // Only what the service will see counts: flags and files, not this shell's AGENTD_*.
  const specs = await ctx.servers.load();
  const settings = await serveSettings(chosen, specs, {});
  try {
    selectServers(settings, specs);
  } catch (error) {
    if (error instanceof UsageError) {
      throw new UsageError(error.message, command);
    }
    throw error;
  }
  const envFile = typeof values["env-file"] === "string"
    ? await checkEnvFile(resolve(values["env-file"]), ctx)
    : undefined;

  const env = (name: string) => ctx.env[name];
  const file = serviceFile(manager, ctx);
  const dataDir = settings.base.data_dir ??
    defaultDataDir({ os: manager === "launchd" ? "darwin" : "linux", env });
  const logFile = manager === "launchd"
    ? join(dataDir, "logs", "agentd.log")
    : undefined;
  const program = [
    ...agentdCommand({
      standalone: Deno.build.standalone,
      execPath: Deno.execPath(),
      mainModule: Deno.mainModule,
    }),
    "serve",
    ...serveArgs,
  ];
  const replaced = await exists(file);
  await Deno.mkdir(dirname(file), { recursive: true });
  if (logFile !== undefined) {
    await Deno.mkdir(dirname(logFile), { recursive: true });
  }
  await Deno.writeTextFile(
    file,
    renderServiceFile(manager, { command: program, envFile, logFile }),
  );
  ctx.print(
    replaced
      ? `Replaced ${file} (the previous service file is overwritten)`
      : `Wrote ${file}`,
  );
  ctx.print(`The service runs: ${program.join(" ")}`);
  if (envFile !== undefined) {
    ctx.print(`Environment from ${envFile} (read at each start)`);
  }
  notes(ctx, program, envFile);

  if (values["no-start"] === true) {
    ctx.print("Not started (--no-start). To start it:");
    for (const step of startSteps(manager, file, false)) {
      ctx.print(`  ${step.join(" ")}`);
    }
    return 0;
  }
  if (manager === "launchd") {
    const target = `${launchdDomain()}/${LAUNCHD_LABEL}`;
    // bootstrap refuses a label that is already loaded.
    if ((await runSystemCommand("launchctl", ["print", target])).ok) {
      await runStep(ctx, ["launchctl", "bootout", target], file);
    }
  }
  for (const step of startSteps(manager, file, replaced)) {
    await runStep(ctx, step, file);
  }
  ctx.print(`Started. Logs: ${logsHint(manager, logFile)}`);
  ctx.print(`Status: agentd service status`);
  if (manager === "systemd") {
    ctx.print(
      "To keep it running while you are logged out: loginctl enable-linger $USER",
    );
  }
  return 0;
}

async function uninstall(ctx: CliContext): Promise<number> {
  const manager = serviceManager(ctx.env);
  const file = serviceFile(manager, ctx);
  if (!(await exists(file))) {
    ctx.print(`agentd service is not installed (no ${file}); nothing to do`);
    return 0;
  }
  const stop = manager === "systemd"
    ? ["systemctl", "--user", "disable", "--now", SYSTEMD_UNIT]
    : ["launchctl", "bootout", `${launchdDomain()}/${LAUNCHD_LABEL}`];
  const stopped = await runLogged(ctx, stop);
  if (!stopped.ok) {
    // Usually "not loaded"; the file goes either way so a reinstall starts clean.
    ctx.print(`  (${stopped.stderr || `exit ${stopped.code}`})`);
  }
  await Deno.remove(file);
  ctx.print(`Removed ${file}`);
  if (manager === "systemd") {
    const reload = await runLogged(ctx, [
      "systemctl",
      "--user",
      "daemon-reload",
    ]);
    if (!reload.ok) ctx.print(`  (${reload.stderr || `exit ${reload.code}`})`);
  }
  return 0;
}

async function status(ctx: CliContext): Promise<number> {
  const manager = serviceManager(ctx.env);
  const file = serviceFile(manager, ctx);
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    ctx.print(`installed: no (${file} does not exist)`);
    ctx.print("Install with: agentd service install [serve flags]");
    return STATUS_NOT_INSTALLED;
  }
  const command = readServiceCommand(manager, text) ?? [];
  ctx.print(`installed: ${file}`);
  ctx.print(`command:   ${command.join(" ") || "(none found in the file)"}`);

  let active = false;
  if (manager === "systemd") {
    const enabled = await runSystemCommand("systemctl", [
      "--user",
      "is-enabled",
      SYSTEMD_UNIT,
    ]);
    const state = await runSystemCommand("systemctl", [
      "--user",
      "is-active",
      SYSTEMD_UNIT,
    ]);
    active = state.stdout === "active";
    ctx.print(`enabled:   ${answer(enabled)}`);
    ctx.print(`active:    ${answer(state)}`);
  } else {
    const printed = await runSystemCommand("launchctl", [
      "print",
      `${launchdDomain()}/${LAUNCHD_LABEL}`,
    ]);
    const state = printed.stdout.match(/^\s*state = (.+)$/m)?.[1]?.trim();
    const pid = printed.stdout.match(/^\s*pid = (\d+)/m)?.[1];
    active = state === "running";
    ctx.print(
      `loaded:    ${
        printed.ok ? "yes" : `no (${printed.stderr || `exit ${printed.code}`})`
      }`,
    );
    if (printed.ok) {
      ctx.print(
        `state:     ${state ?? "unknown"}${pid ? ` (pid ${pid})` : ""}`,
      );
    }
  }

  const health = await probeHealth(
    await daemonAddress(serveArgsOf(command), ctx),
    ctx.env.AGENTD_TOKEN,
  );
  ctx.print(`health:    ${health.summary}`);
  if (!active && health.answered) {
    ctx.print(
      "           (an agentd answers on the service's port, but the service manager does not report it active)",
    );
  }
  return active || health.answered ? STATUS_RUNNING : STATUS_STOPPED;
}

/** The env file must exist; a file others can read gets a warning, not a refusal. */
async function checkEnvFile(path: string, ctx: CliContext): Promise<string> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
  } catch (error) {
    throw new UsageError(
      `flag --env-file: ${path}: ${
        error instanceof Deno.errors.NotFound ? "not found" : messageOf(error)
      }`,
      "service install",
    );
  }
  if (!info.isFile) {
    throw new UsageError(
      `flag --env-file: ${path} is not a file`,
      "service install",
    );
  }
  if (info.mode !== null && (info.mode & 0o077) !== 0) {
    ctx.print(
      `Note: ${path} is readable by other users; it holds secrets: chmod 600 ${path}`,
    );
  }
  return path;
}

/** Warnings about what the service will not see the way this shell does. */
function notes(
  ctx: CliContext,
  program: readonly string[],
  envFile: string | undefined,
): void {
  if (envFile === undefined) {
    const names = Object.keys(ctx.env).filter((name) =>
      (name.startsWith("AGENTD_") && name !== "AGENTD_SERVICE_PLATFORM") ||
      name.endsWith("_API_KEY")
    ).sort();
    if (names.length > 0) {
      ctx.print(
        `Note: the service does not see this shell's ${
          names.join(", ")
        }; put what it needs in a file (mode 600) and install with --env-file FILE`,
      );
    }
  }
  const executable = program[0] ?? "";
  if (executable.includes("/_npx/") || executable.includes("/.npm/")) {
    ctx.print(
      `Note: the service runs deno from the npm cache (${executable}); if that cache is cleared, ` +
        "install again with a deno on PATH, or compile agentd (deno task compile).",
    );
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}
