// An upstream's tool list as the gateway exposes it: a built-in server's own
// list or every page of tools/list, cut to the configured tools and to names
// nested at most once. Apart from upstream.ts, which owns the connection.

import type { Client, Tool } from "../../platform/mcp_sdk.ts";
import { SEPARATOR } from "./naming.ts";
import { type UpstreamTarget, withTimeout } from "./transports.ts";

/** The tools an upstream exposes: `filter` (when set) names them. */
export async function exposedTools(
  client: Client,
  options: {
    target: UpstreamTarget;
    filter: ReadonlySet<string> | undefined;
    timeoutMs: number;
  },
): Promise<Tool[]> {
  const { target, filter } = options;
  // A built-in server's list as its linked client gets it, without the round trip.
  const tools = target.kind === "builtin"
    ? await withTimeout(
      target.peer.listTools(),
      options.timeoutMs,
      "tools/list",
    )
    : await listPages(client, options.timeoutMs);
  return tools.filter((tool) =>
    (filter === undefined || filter.has(tool.name)) &&
    // Tools nested twice already come from gateways of gateways: dropping
    // them keeps two gateways that register each other from growing forever.
    tool.name.split(SEPARATOR).length <= 2
  );
}

async function listPages(client: Client, timeoutMs: number): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined, {
      timeout: timeoutMs,
    });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

/** Every tool name `client` lists, ignoring the filter (to validate a registration). */
export async function allToolNames(client: Client): Promise<string[]> {
  const names: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    names.push(...page.tools.map((tool) => tool.name));
    cursor = page.nextCursor;
  } while (cursor);
  return names;
}
