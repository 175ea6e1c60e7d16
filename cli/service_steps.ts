// How `agentd service` talks to the service manager: which one (systemd or
// launchd), the system commands it runs and their failures, and where the
// service file lives. Apart from cli/service.ts, which holds the actions.

import { messageOf } from "../platform/errors.ts";
import {
  serviceFilePath,
  type ServiceManager,
  SYSTEMD_UNIT,
} from "../platform/service_files.ts";
import type { CliContext } from "./context.ts";

/** A service step that failed (exit code 1), with what to do about it. */
export class ServiceError extends Error {
  override name = "ServiceError";
}

export interface CommandResult {
  ok: boolean;
  code: number;
  stdout: string;
  stderr: string;
}

/** Every system command goes through here; tests put fake systemctl/launchctl first on PATH. */
export async function runSystemCommand(
  program: string,
  args: readonly string[],
): Promise<CommandResult> {
  try {
    const output = await new Deno.Command(program, {
      args: [...args],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(30_000),
    }).output();
    const decoder = new TextDecoder();
    return {
      ok: output.success,
      code: output.code,
      stdout: decoder.decode(output.stdout).trim(),
      stderr: decoder.decode(output.stderr).trim(),
    };
  } catch (error) {
    const why = error instanceof Deno.errors.NotFound
      ? `${program} not found on PATH`
      : messageOf(error);
    return { ok: false, code: 127, stdout: "", stderr: why };
  }
}

/** systemd or launchd; the OS comes from AGENTD_SERVICE_PLATFORM when set. */
export function serviceManager(env: Record<string, string>): ServiceManager {
  const override = env.AGENTD_SERVICE_PLATFORM;
  const os = override || Deno.build.os;
  if (os === "linux") return "systemd";
  if (os === "darwin") return "launchd";
  if (os === "windows") {
    throw new ServiceError(
      'agentd service is not supported on Windows yet: run "agentd serve" in a terminal, ' +
        'or create a Task Scheduler task that runs "agentd serve" at log on.',
    );
  }
  if (override) {
    throw new ServiceError(
      `AGENTD_SERVICE_PLATFORM=${override} is not one of linux, darwin`,
    );
  }
  throw new ServiceError(
    `agentd service supports systemd (Linux) and launchd (macOS), not ${os}: ` +
      'run "agentd serve" under your init system instead.',
  );
}

/** The commands that (re)start an installed service. */
export function startSteps(
  manager: ServiceManager,
  file: string,
  replaced: boolean,
): string[][] {
  if (manager === "launchd") {
    return [["launchctl", "bootstrap", launchdDomain(), file]];
  }
  const steps = [
    ["systemctl", "--user", "daemon-reload"],
    ["systemctl", "--user", "enable", "--now", SYSTEMD_UNIT],
  ];
  // enable --now leaves a running service alone; the new command needs a restart.
  if (replaced) steps.push(["systemctl", "--user", "restart", SYSTEMD_UNIT]);
  return steps;
}

export async function runLogged(
  ctx: CliContext,
  step: readonly string[],
): Promise<CommandResult> {
  const [program = "", ...args] = step;
  ctx.print(`Ran: ${step.join(" ")}`);
  return await runSystemCommand(program, args);
}

export async function runStep(
  ctx: CliContext,
  step: readonly string[],
  file: string,
): Promise<void> {
  const result = await runLogged(ctx, step);
  if (result.ok) return;
  const why = result.stderr || result.stdout || `exit code ${result.code}`;
  const hint = /bus|XDG_RUNTIME_DIR/i.test(why)
    ? " There is no systemd user session here (log in to a desktop or over SSH, or run " +
      '"loginctl enable-linger $USER"); or install with --no-start.'
    : "";
  throw new ServiceError(
    `${
      step.join(" ")
    } failed: ${why}.${hint} The service file is at ${file}; ` +
      `fix the problem and run "agentd service install" again.`,
  );
}

export function answer(result: CommandResult): string {
  if (result.stdout !== "") return result.stdout;
  return `unknown (${result.stderr || `exit ${result.code}`})`;
}

export function logsHint(manager: ServiceManager, logFile?: string): string {
  return manager === "systemd"
    ? `journalctl --user -u ${SYSTEMD_UNIT} -f`
    : `tail -f ${logFile ?? "<data dir>/logs/agentd.log"}`;
}

export function serviceFile(manager: ServiceManager, ctx: CliContext): string {
  try {
    return serviceFilePath(manager, (name) => ctx.env[name]);
  } catch (error) {
    throw new ServiceError(messageOf(error));
  }
}

export function launchdDomain(): string {
  const uid = Deno.uid();
  if (uid === null) throw new ServiceError("cannot tell this user's uid");
  return `gui/${uid}`;
}
