// `deno task compile [--target T] [--output F]`: the single agentd
// executable (dist/agentd unless --output says). `deno compile` embeds only
// the modules it can see from main.ts; those imported on first use are passed
// with --include, from lazy_modules.ts. The release workflow runs this too.

import { LAZY_MODULE_PATHS } from "./lazy_modules.ts";

/** The `deno compile` arguments; `extra` (--target, --output, …) go before main.ts. */
export function compileArgs(extra: readonly string[]): string[] {
  const output =
    extra.some((arg) =>
        arg === "--output" || arg === "-o" || arg.startsWith("--output=")
      )
      ? []
      : ["--output", "dist/agentd"];
  return [
    "compile",
    "--allow-all",
    "--unstable-kv",
    "--unstable-no-legacy-abort",
    "--v8-flags=--max-semi-space-size=1",
    ...LAZY_MODULE_PATHS.flatMap((path) => ["--include", path]),
    ...output,
    ...extra,
    "main.ts",
  ];
}

if (import.meta.main) {
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: compileArgs(Deno.args),
    cwd: new URL(".", import.meta.url),
  }).spawn().status;
  Deno.exit(code);
}
