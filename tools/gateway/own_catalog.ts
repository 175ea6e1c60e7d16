// The gateway's own tools beside the aggregate in on-demand mode: their
// tools/list entries and a call by name, over the list mod.ts gathers.

import { z } from "zod";
import type { CallToolResult, Tool } from "../../platform/mcp_sdk.ts";
import { describeIssues } from "../../platform/validation.ts";
import { type CallContext, errorResult, type ToolDef } from "../kit/mod.ts";
import { runDefined } from "../kit/tool_call.ts";
import { type Gateway, GATEWAY_ID, type GatewayOptions } from "./gateway.ts";

/** Lists and calls `tools`, the gateway's own, for the on-demand catalog. */
export function ownCatalog(
  tools: readonly ToolDef<Gateway>[],
): GatewayOptions["ownTools"] {
  return {
    list: () => ownListings(tools),
    call: (gateway, name, args, call) =>
      callOwn(tools, gateway, name, args, call),
  };
}

/** The gateway's own tools as tools/list shows them, for the on-demand catalog. */
function ownListings(tools: readonly ToolDef<Gateway>[]): Tool[] {
  return tools.map((def) => {
    const schema = z.toJSONSchema(def.input.strict(), {
      target: "draft-2020-12",
      io: "input",
    });
    const listing: Tool = {
      name: def.name,
      description: def.description,
      inputSchema: {
        type: "object",
        properties: z.record(z.string(), z.object({}).passthrough()).parse(
          Reflect.get(schema, "properties") ?? {},
        ),
        required: z.array(z.string()).optional().parse(
          Reflect.get(schema, "required"),
        ),
      },
    };
    if (def.title !== undefined) listing.title = def.title;
    if (def.annotations !== undefined) listing.annotations = def.annotations;
    return listing;
  });
}

/** Calls one of the gateway's own tools by name (call_tool in on-demand mode); undefined when none has that name. */
function callOwn(
  tools: readonly ToolDef<Gateway>[],
  gateway: Gateway,
  name: string,
  args: Record<string, unknown>,
  call: CallContext,
): Promise<CallToolResult> | undefined {
  const def = tools.find((tool) => tool.name === name);
  if (!def) return undefined;
  const parsed = def.input.strict().safeParse(args);
  if (!parsed.success) {
    return Promise.resolve(
      errorResult(
        `Invalid arguments for ${name}: ${describeIssues(parsed.error)}`,
      ),
    );
  }
  // The kit's one way to run a defined tool: canonical arguments, its
  // capabilities judged as gateway.<tool>, then the handler.
  return runDefined(def, parsed.data, {
    server: GATEWAY_ID,
    context: () => gateway,
    guard: gateway.guard,
    call,
    rawArgs: args,
    connection: call.connection,
  });
}
