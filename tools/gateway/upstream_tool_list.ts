// An upstream's tool list as the gateway exposes it: a built-in server's own
// list or every page of tools/list, cut to the configured tools and to names
// nested at most once. Apart from upstream.ts, which owns the connection.

import type { Client, Tool } from "../../platform/mcp_sdk.ts";
import { nestedTwice } from "../kit/tool_names.ts";
import type { UpstreamTarget } from "./transports.ts";
import { withDeadline } from "./deadlines.ts";

/** tools/list, every page, within `timeoutMs` (`health_timeout_ms`) in all. */
function listDeadline(timeoutMs: number) {
  return { step: "tools/list", ms: timeoutMs, setting: "health_timeout_ms" };
}

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
  const tools = await withDeadline(
    target.kind === "builtin"
      ? target.peer.listTools()
      : listPages(client, options.timeoutMs),
    listDeadline(options.timeoutMs),
  );
  return tools.filter((tool) =>
    (filter === undefined || filter.has(tool.name)) &&
    // Tools nested twice already come from gateways of gateways: dropping
    // them keeps two gateways that register each other from growing forever.
    !nestedTwice(tool.name)
  );
}

async function listPages(client: Client, timeoutMs: number): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    // The SDK's timeout is a backstop; withDeadline bounds every page together.
    const page = await client.listTools(cursor ? { cursor } : undefined, {
      timeout: timeoutMs + 1000,
    });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

/** Every tool name `client` lists, ignoring the filter (to validate a registration). */
export async function allToolNames(
  client: Client,
  timeoutMs: number,
): Promise<string[]> {
  const tools = await withDeadline(
    listPages(client, timeoutMs),
    listDeadline(timeoutMs),
  );
  return tools.map((tool) => tool.name);
}
