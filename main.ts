// agentd: the CLI's entry. `agentd mcp <server>` on stdio starts the server's
// stdio front first (cli/stdio_front.ts): it answers `initialize` and
// `tools/list` from the server's generated facts while the rest (the MCP SDK,
// zod, the config, the server) loads, then hands the stream over. The CLI
// itself is cli/main.ts, loaded after (platform/lazy.ts: no literal import,
// so none of its graph loads before the front runs).
// AGENTD_STDIO_FRONT=off runs without the front (the tests compare both).

import { lazy } from "./platform/lazy.ts";
import { frontServerOf, startFront } from "./cli/stdio_front.ts";
import type { MainOptions } from "./cli/main.ts";

export type { MainOptions };

export async function main(
  args: string[],
  options: MainOptions = {},
): Promise<number> {
  // `mcp` comes in with the seams its servers run (cli/mcp_entry.ts).
  const cli = args[0] === "mcp"
    ? await lazy<typeof import("./cli/mcp_entry.ts")>(
      "./cli/mcp_entry.ts",
      import.meta.url,
    )
    : await lazy<typeof import("./cli/main.ts")>(
      "./cli/main.ts",
      import.meta.url,
    );
  return await cli.main(args, options);
}

if (import.meta.main) {
  const id = Deno.env.get("AGENTD_STDIO_FRONT") === "off"
    ? undefined
    : frontServerOf(Deno.args);
  const stdioFront = id === undefined ? undefined : await startFront(id);
  // The CLI's modules take the main thread while they load: after the front's answers.
  await stdioFront?.settled();
  Deno.exit(await main(Deno.args, stdioFront ? { stdioFront } : {}));
}
