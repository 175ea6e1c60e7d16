// `agentd doctor`: checks what agentd needs on this machine and says how to
// fix what is missing. Exit 1 when something agentd cannot run without fails.

import {
  doctorFlags,
  FIRST_STEPS,
  flagsHelp,
  noArguments,
  parseFlags,
} from "./args.ts";
import { messageOf } from "../platform/errors.ts";
import { loadSettings, type Settings } from "./boot.ts";
import type { CliContext } from "./context.ts";
import { findBrowser } from "../platform/browser_discovery.ts";
import {
  describeStore,
  isPostgresUrl,
  openStoreAt,
} from "../platform/store/open.ts";
import { VERSION } from "../platform/version.ts";
import {
  providerNames,
  ProvidersConfig,
  resolveProvider,
} from "../agents/providers/config.ts";

export interface Check {
  name: string;
  ok: boolean;
  /** Whether agentd as a whole cannot run without it (as opposed to one server). */
  required: boolean;
  detail: string;
  fix?: string;
}

export const DOCTOR_HELP = `Usage: agentd doctor [flags]

Checks the config, data directory, store, port, model providers, browser and
display, and says how to fix what is missing.

Flags:
${flagsHelp(doctorFlags)}

${FIRST_STEPS}`;

export async function runDoctor(
  args: string[],
  ctx: CliContext,
): Promise<number> {
  const { values, positionals } = parseFlags("doctor", args, doctorFlags);
  if (values.help === true) {
    ctx.print(DOCTOR_HELP);
    return 0;
  }
  noArguments(positionals, "doctor");
  const flags: Record<string, unknown> = {};
  if (typeof values.config === "string") flags.config = values.config;
  if (typeof values["data-dir"] === "string") {
    flags.data_dir = values["data-dir"];
  }

  const checks: Check[] = [];
  let settings: Settings | undefined;
  try {
    settings = await loadSettings({
      flags,
      specs: await ctx.servers.load(),
      env: ctx.env,
    });
    checks.push({
      name: "config",
      ok: true,
      required: true,
      detail: settings.configFile
        ? `read ${settings.configFile}`
        : "no config file; defaults, env and flags apply",
    });
  } catch (error) {
    checks.push({
      name: "config",
      ok: false,
      required: true,
      detail: messageOf(error),
      fix: "correct the value named above",
    });
  }
  if (settings) {
    checks.push(await checkStore(settings));
    checks.push(await checkPort(settings.base.host, settings.base.port));
    checks.push(await checkModels(settings, ctx.env));
  }
  checks.push(checkBrowser(ctx.env));
  checks.push(checkDisplay(ctx.env));

  ctx.print(`agentd ${VERSION} doctor`);
  for (const check of checks) {
    const mark = check.ok ? "ok  " : check.required ? "FAIL" : "warn";
    ctx.print(`${mark} ${check.name.padEnd(8)} ${check.detail}`);
    if (!check.ok && check.fix) {
      ctx.print(`     ${"".padEnd(8)} fix: ${check.fix}`);
    }
  }
  return checks.some((check) => !check.ok && check.required) ? 1 : 0;
}

/** Which model providers agents could call now (keys set, URLs valid); never prints a key. */
async function checkModels(
  settings: Settings,
  env: Readonly<Record<string, string>>,
): Promise<Check> {
  const parsed = ProvidersConfig.safeParse(settings.values.providers ?? {});
  if (!parsed.success) {
    return {
      name: "models",
      ok: false,
      required: false,
      detail: `providers config is invalid: ${parsed.error.message}`,
      fix: "correct the providers section of the config file",
    };
  }
  const usable: string[] = [];
  const missing: string[] = [];
  for (const name of providerNames(parsed.data)) {
    const provider = resolveProvider(name, { config: parsed.data, env });
    if (!provider) continue;
    if (provider.problem !== undefined) {
      if (provider.keyEnv) missing.push(provider.keyEnv);
    } else if (provider.apiKey !== undefined) {
      usable.push(name);
    } else if (await answers(provider.baseUrl)) {
      // A keyless provider (Ollama, a local vLLM) counts only when it runs.
      usable.push(name);
    }
  }
  return usable.length > 0
    ? {
      name: "models",
      ok: true,
      required: false,
      detail: `agents can use ${usable.join(", ")} (model "<provider>/<name>")`,
    }
    : {
      name: "models",
      ok: false,
      required: false,
      detail: "no model provider is usable: /v1 agents cannot answer",
      fix: `set ${
        missing.join(" or ") || "an API key"
      }, or configure a local server (providers.ollama, OLLAMA_HOST)`,
    };
}

async function answers(baseUrl: string): Promise<boolean> {
  try {
    const response = await fetch(`${baseUrl.replace(/\/$/, "")}/models`, {
      signal: AbortSignal.timeout(1_000),
    });
    await response.body?.cancel();
    return response.status < 500;
  } catch {
    return false;
  }
}

async function checkStore(settings: Settings): Promise<Check> {
  const dataDir = settings.dataDir;
  const where = { store: settings.base.store, dataDir };
  const path = describeStore(where);
  try {
    const store = await openStoreAt(where);
    try {
      const key = ["doctor", crypto.randomUUID()];
      await store.set(key, "probe");
      const back = await store.get(key);
      await store.delete(key);
      if (back?.value !== "probe") {
        throw new Error("a value written could not be read back");
      }
    } finally {
      await store.close();
    }
    return {
      name: "store",
      ok: true,
      required: true,
      detail: `${path} opens, writes and reads`,
    };
  } catch (error) {
    return {
      name: "store",
      ok: false,
      required: true,
      detail: messageOf(error),
      fix: isPostgresUrl(where.store)
        ? `check that PostgreSQL at ${path} is up and the URL's user may create tables`
        : `make ${dataDir} writable, or pass --data-dir DIR`,
    };
  }
}

async function checkPort(host: string, port: number): Promise<Check> {
  try {
    const probe = Deno.listen({ hostname: host, port });
    probe.close();
    return {
      name: "port",
      ok: true,
      required: false,
      detail: `${host}:${port} is free`,
    };
  } catch (error) {
    if (error instanceof Deno.errors.AddrInUse) {
      const running = await fetch(
        `http://${host.includes(":") ? `[${host}]` : host}:${port}/health`,
      )
        .then((response) => response.json())
        .then((body) =>
          typeof body === "object" && body !== null && "servers" in body
        )
        .catch(() => false);
      return running
        ? {
          name: "port",
          ok: true,
          required: false,
          detail: `agentd already answers on ${host}:${port}`,
        }
        : {
          name: "port",
          ok: false,
          required: false,
          detail: `${host}:${port} is used by another program`,
          fix: "stop it, or run agentd with --port N",
        };
    }
    return {
      name: "port",
      ok: false,
      required: false,
      detail: messageOf(error),
      fix: "choose another --host",
    };
  }
}

function checkBrowser(env: Record<string, string>): Check {
  const found = findBrowser(env);
  return found
    ? { name: "browser", ok: true, required: false, detail: `found ${found}` }
    : {
      name: "browser",
      ok: false,
      required: false,
      detail: "no Chromium or Chrome on PATH (needed by browser automation)",
      fix: "install one (Debian: sudo apt-get install chromium)",
    };
}

function checkDisplay(env: Record<string, string>): Check {
  if (Deno.build.os !== "linux") {
    return {
      name: "display",
      ok: true,
      required: false,
      detail: `${Deno.build.os} desktop session`,
    };
  }
  const display = env.DISPLAY;
  if (!display) {
    return {
      name: "display",
      ok: false,
      required: false,
      detail: "DISPLAY is not set (needed by desktop control)",
      fix: "run inside an X session, or start Xvfb :99 and set DISPLAY=:99",
    };
  }
  try {
    Deno.dlopen("libX11.so.6", {}).close();
    return {
      name: "display",
      ok: true,
      required: false,
      detail: `DISPLAY=${display}, libX11 loads`,
    };
  } catch (error) {
    return {
      name: "display",
      ok: false,
      required: false,
      detail: `libX11 does not load: ${messageOf(error)}`,
      fix: "install libx11-6 and libxtst6",
    };
  }
}
