// `agentd serve`: the HTTP daemon with every enabled server at /mcp/<id> and
// the gateway over them at /mcp.

import {
  FIRST_STEPS,
  flagsHelp,
  noArguments,
  parseFlags,
  serveFlags,
} from "./args.ts";
import { selectServers, serveSettings, startHttpDaemon } from "./boot.ts";
import type { CliContext } from "./context.ts";
import { serveHttp } from "./http_face.ts";
import { startAgents } from "./agents.ts";

export const SERVE_HELP = `Usage: agentd serve [flags]

Runs the daemon: the gateway over every enabled MCP server at /mcp, each
server at /mcp/<server>, the agents API at /v1 (docs at /docs), /admin,
/health and /metrics.

Flags:
${flagsHelp(serveFlags)}

Every flag can also be set in the config file or as AGENTD_<NAME>
(AGENTD_PORT, AGENTD_DATA_DIR, ...); flags win. Binding off loopback needs
a token (AGENTD_TOKEN or token_file).

${FIRST_STEPS}`;

export async function runServe(
  args: string[],
  ctx: CliContext,
): Promise<number> {
  const { values, positionals } = parseFlags("serve", args, serveFlags);
  if (values.help === true) {
    ctx.print(SERVE_HELP);
    return 0;
  }
  noArguments(positionals, "serve");
  // Every section is validated; only the servers that run are loaded (idle
  // memory), and of those only the ones that aggregate others (the gateway)
  // and those whose start finds what /health must say at start: the rest on
  // first use (HostedServer.deferred).
  const sections = await ctx.servers.sections();
  const settings = await serveSettings(values, sections, ctx.env);
  const ids = selectServers(settings, sections).map((section) => section.id);
  const deferred = await ctx.servers.deferrals?.(ids) ?? [];
  const specs = await ctx.servers.load(
    ids.filter((id) => !deferred.some((each) => each.facts.id === id)),
  );
  const daemon = await startHttpDaemon(settings, specs, {
    env: ctx.env,
    deferred,
    order: ids,
  });
  const { agents, a2a } = await startAgents({
    settings,
    store: daemon.store,
    hosts: daemon.hosts,
    log: daemon.log,
    env: ctx.env,
  });
  return await serveHttp({ ...daemon, agents, a2a, layout: "daemon" });
}
