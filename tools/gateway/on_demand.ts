// Tools on demand: instead of every tool, a client may list three meta-tools
// (search the catalog, describe one tool, call it) and pay for a schema only
// when it needs one. Search ranks with platform/text_rank.ts: BM25 plus
// hashed trigram vectors, local, no API key.

import { z } from "zod";
import type {
  CallToolResult,
  ClientCapabilities,
  Tool,
} from "../../platform/mcp_sdk.ts";
import type { JsonValue } from "../../platform/store.ts";
import { TextRanker } from "../../platform/text_rank.ts";
import { describeIssues } from "../../platform/validation.ts";
import { type CallContext, ToolError } from "../kit/mod.ts";
import { checkedOutput, outputSchemaOf } from "../kit/tool_call.ts";
import type { ToolsMode } from "./config.ts";

/** The experimental client capability choosing the mode per client: `{"mode": "on_demand"}` or `{"mode": "all"}`. */
export const TOOLS_CAPABILITY = "io.agentd/tools";

const SearchInput = z.strictObject({
  query: z.string().min(1).max(500)
    .describe("What the tool should do, in words, e.g. 'store a memory'"),
  limit: z.number().int().min(1).max(20).default(5),
});
const DescribeInput = z.strictObject({
  name: z.string().min(1).describe("A tool name from search_tools"),
});
const CallInput = z.strictObject({
  name: z.string().min(1).describe("A tool name from search_tools"),
  arguments: z.record(z.string(), z.unknown()).default({})
    .describe("The tool's arguments, as describe_tool shows its schema"),
});

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

function listingOf(
  name: string,
  title: string,
  description: string,
  input: z.ZodObject,
  output?: z.ZodObject,
): Tool {
  const schema = z.toJSONSchema(input, {
    target: "draft-2020-12",
    io: "input",
  });
  const listing: Tool = {
    name,
    title,
    description,
    inputSchema: {
      type: "object",
      properties: z.record(z.string(), z.object({}).passthrough()).parse(
        Reflect.get(schema, "properties") ?? {},
      ),
      required: z.array(z.string()).optional().parse(
        Reflect.get(schema, "required"),
      ),
    },
    annotations: { readOnlyHint: name !== "call_tool" },
  };
  // call_tool answers whatever the tool it calls answers: no schema.
  if (output !== undefined) {
    listing.outputSchema = outputSchemaOf(output);
  }
  return listing;
}

export const META_LISTINGS: readonly Tool[] = [
  listingOf(
    "search_tools",
    "Search tools",
    "Finds tools behind this gateway by what they do: names (<server>__<tool>), one-line descriptions " +
      "and argument names, best first. Then describe_tool for a full schema and call_tool to run one.",
    SearchInput,
    SearchOutput,
  ),
  listingOf(
    "describe_tool",
    "Describe a tool",
    "The full definition of one tool: description and JSON Schema of its arguments.",
    DescribeInput,
    DescribeOutput,
  ),
  listingOf(
    "call_tool",
    "Call a tool",
    "Calls any tool behind this gateway by name with its arguments; returns that tool's result.",
    CallInput,
  ),
];

export const META_NAMES: ReadonlySet<string> = new Set(
  META_LISTINGS.map((tool) => tool.name),
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
  const name = tool.name.replaceAll("__", " ");
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

  async call(
    name: string,
    args: Record<string, unknown>,
    call: CallContext,
  ): Promise<CallToolResult> {
    if (name === "search_tools") {
      const input = parsed(name, SearchInput, args);
      const hits = this.#rankerNow().rank(input.query, input.limit);
      const results = hits.map(({ item, score }) => ({
        name: item.name,
        description: brief(item.description),
        required: item.inputSchema.required ?? [],
        score,
      }));
      const lines = results.map((hit) =>
        `${hit.name}(${hit.required.join(", ")}): ${hit.description}`
      );
      const body: { [key: string]: JsonValue } = {
        query: input.query,
        results,
      };
      return checkedOutput({ name, output: SearchOutput }, {
        content: [{
          type: "text",
          text: lines.length > 0
            ? `${
              lines.join("\n")
            }\n(describe_tool NAME for the schema, call_tool to run)`
            : `No tool matches "${input.query}". Try other words.`,
        }],
        structuredContent: body,
      }, undefined);
    }
    if (name === "describe_tool") {
      const input = parsed(name, DescribeInput, args);
      const tool = this.#find(input.name);
      return checkedOutput({ name, output: DescribeOutput }, {
        content: [{ type: "text", text: JSON.stringify(tool) }],
        structuredContent: { tool: JSON.parse(JSON.stringify(tool)) },
      }, undefined);
    }
    const input = parsed(name, CallInput, args);
    if (META_NAMES.has(input.name)) {
      throw new ToolError(
        `name: call ${input.name} directly, not through call_tool`,
      );
    }
    this.#find(input.name);
    return await this.#source.call(input.name, input.arguments, call);
  }
}

function parsed<T extends z.ZodObject>(
  tool: string,
  schema: T,
  args: Record<string, unknown>,
): z.output<T> {
  const result = schema.safeParse(args);
  if (!result.success) {
    throw new ToolError(
      `Invalid arguments for ${tool}: ${describeIssues(result.error)}`,
    );
  }
  return result.data;
}
