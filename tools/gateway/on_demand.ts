// Tools on demand: instead of every tool, a client may list three meta-tools
// (search the catalog, describe one tool, call it) and pay for a schema only
// when it needs one. Search ranks with tools/gateway/text_rank.ts: BM25 plus
// hashed trigram vectors, local, no API key.

import { z } from "zod";
import type {
  CallToolResult,
  ClientCapabilities,
  Tool,
} from "../../platform/mcp_sdk.ts";
import type { JsonValue } from "../../platform/store/mod.ts";
import { TextRanker } from "./text_rank.ts";
import {
  type CallContext,
  type ToolDef,
  toolDefiner,
  ToolError,
} from "../kit/mod.ts";
import { originOf } from "../kit/tool_names.ts";
import type { ToolsMode } from "./config.ts";

/** The experimental client capability choosing the mode per client: `{"mode": "on_demand"}` or `{"mode": "all"}`. */
export const TOOLS_CAPABILITY = "io.agentd/tools";

const SearchOutput = z.object({
  query: z.string(),
  results: z.array(z.object({
    name: z.string(),
    description: z.string(),
    required: z.array(z.string()),
    score: z.number(),
  })),
});
const DescribeOutput = z.object({
  // The tool's tools/list entry, as the gateway lists it.
  tool: z.looseObject({
    name: z.string(),
    inputSchema: z.looseObject({ type: z.literal("object") }),
  }),
});

/** What the meta-tools search, describe and call: the gateway's whole catalog. */
export interface ToolSource {
  /** Every tool callable here: the gateway's own and every upstream's. */
  all(): Tool[];
  /** Changes whenever the set of tools does (the ranker is rebuilt then). */
  key(): string;
  call(
    name: string,
    args: Record<string, unknown>,
    call: CallContext,
  ): Promise<CallToolResult>;
}

const defineMetaTool = toolDefiner<OnDemandTools>();

/** The three meta-tools, defined and run like any other tool (kit/tool_call.ts). */
export const META_TOOLS: readonly ToolDef<OnDemandTools>[] = [
  defineMetaTool({
    name: "search_tools",
    group: "on_demand",
    title: "Search tools",
    description:
      "Finds tools behind this gateway by what they do: names (<server>__<tool>), one-line descriptions " +
      "and argument names, best first. Then describe_tool for a full schema and call_tool to run one.",
    input: z.object({
      query: z.string().min(1).max(500)
        .describe("What the tool should do, in words, e.g. 'store a memory'"),
      limit: z.number().int().min(1).max(20).default(5),
    }),
    output: SearchOutput,
    annotations: { readOnlyHint: true },
    touches: [],
    handle: (tools, args) =>
      Promise.resolve(tools.search(args.query, args.limit)),
  }),
  defineMetaTool({
    name: "describe_tool",
    group: "on_demand",
    title: "Describe a tool",
    description:
      "The full definition of one tool: description and JSON Schema of its arguments.",
    input: z.object({
      name: z.string().min(1).describe("A tool name from search_tools"),
    }),
    output: DescribeOutput,
    annotations: { readOnlyHint: true },
    touches: [],
    handle: (tools, args) => Promise.resolve(tools.describe(args.name)),
  }),
  defineMetaTool({
    name: "call_tool",
    group: "on_demand",
    title: "Call a tool",
    description:
      "Calls any tool behind this gateway by name with its arguments; returns that tool's result.",
    input: z.object({
      name: z.string().min(1).describe("A tool name from search_tools"),
      arguments: z.record(z.string(), z.unknown()).default({})
        .describe("The tool's arguments, as describe_tool shows its schema"),
    }),
    annotations: { readOnlyHint: false },
    touches: [],
    handle: (tools, args, call) =>
      tools.callTool(args.name, args.arguments, call),
  }),
];

export const META_NAMES: ReadonlySet<string> = new Set(
  META_TOOLS.map((tool) => tool.name),
);

/**
 * The mode a client gets: its capability when it states one, else what it
 * asked for on the endpoint (`?tools=`, `X-Agentd-Tools`), else the config's.
 */
export function modeFor(
  client: ClientCapabilities | undefined,
  configured: ToolsMode,
  askedOnEndpoint?: ToolsMode,
): ToolsMode {
  const asked = client?.experimental?.[TOOLS_CAPABILITY];
  const mode = typeof asked === "object" && asked !== null
    ? Reflect.get(asked, "mode")
    : undefined;
  if (mode === "all" || mode === "on_demand") return mode;
  return askedOnEndpoint ?? configured;
}

function documentOf(tool: Tool): string {
  // Server and tool as words (`memory store_memory`), from the listing's origin.
  const origin = originOf(tool);
  const name = origin ? `${origin.server} ${origin.tool}` : tool.name;
  const properties = Object.entries(tool.inputSchema.properties ?? {}).map((
    [key, value],
  ) => `${key} ${String(Reflect.get(value, "description") ?? "")}`);
  // The name four times: it is the densest statement of what the tool does,
  // and must outweigh mentions of other tools in descriptions.
  return [name, name, name, name, tool.description ?? "", ...properties]
    .join(" ");
}

/** The first sentence, at most 160 characters: enough to choose, cheap to read. */
function brief(description: string | undefined): string {
  const first = (description ?? "").split(/(?<=\.)\s/)[0] ?? "";
  return first.length > 160 ? `${first.slice(0, 157)}...` : first;
}

export class OnDemandTools {
  readonly #source: ToolSource;
  #ranker: { key: string; ranker: TextRanker<Tool> } | undefined;

  constructor(source: ToolSource) {
    this.#source = source;
  }

  #rankerNow(): TextRanker<Tool> {
    const key = this.#source.key();
    if (this.#ranker?.key !== key) {
      this.#ranker = {
        key,
        ranker: new TextRanker(this.#source.all(), documentOf),
      };
    }
    return this.#ranker.ranker;
  }

  #find(name: string): Tool {
    const tool = this.#source.all().find((candidate) =>
      candidate.name === name
    );
    if (tool) return tool;
    const near = this.#rankerNow().rank(name, 3).map((hit) => hit.item.name);
    throw new ToolError(
      `name: no tool "${name}" here.${
        near.length > 0 ? ` Did you mean ${near.join(", ")}?` : ""
      } Use search_tools to find one.`,
    );
  }

  /** search_tools: the best matches for `query`, one line each. */
  search(query: string, limit: number): CallToolResult {
    const hits = this.#rankerNow().rank(query, limit);
    const results = hits.map(({ item, score }) => ({
      name: item.name,
      description: brief(item.description),
      required: item.inputSchema.required ?? [],
      score,
    }));
    const lines = results.map((hit) =>
      `${hit.name}(${hit.required.join(", ")}): ${hit.description}`
    );
    const body: { [key: string]: JsonValue } = { query, results };
    return {
      content: [{
        type: "text",
        text: lines.length > 0
          ? `${
            lines.join("\n")
          }\n(describe_tool NAME for the schema, call_tool to run)`
          : `No tool matches "${query}". Try other words.`,
      }],
      structuredContent: body,
    };
  }

  /** describe_tool: one tool's whole listing. */
  describe(name: string): CallToolResult {
    const tool = this.#find(name);
    return {
      content: [{ type: "text", text: JSON.stringify(tool) }],
      structuredContent: { tool: JSON.parse(JSON.stringify(tool)) },
    };
  }

  /** call_tool: any tool of the catalog but the meta-tools, by name. */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    call: CallContext,
  ): Promise<CallToolResult> {
    if (META_NAMES.has(name)) {
      throw new ToolError(
        `name: call ${name} directly, not through call_tool`,
      );
    }
    this.#find(name);
    return await this.#source.call(name, args, call);
  }
}
