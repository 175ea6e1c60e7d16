// Search tools: hybrid search in one namespace, and across several.

import { z } from "zod";
import type { JsonValue } from "../../platform/store/mod.ts";
import { json, toolDefiner } from "../kit/mod.ts";
import { cutValue, namespace, query } from "./schemas.ts";
import type { SearchHit, SearchOutcome } from "./service.ts";
import type { MemoryService } from "./service.ts";

const tool = toolDefiner<MemoryService>();

/** Values in hits are cut to this many characters; retrieve_memory gives the whole value. */
const HIT_VALUE_CHARS = 1000;

const limit = z.number().int().min(1).max(50).optional().describe(
  "Most hits to return (default 10)",
);

const HitOut = z.object({
  namespace: z.string(),
  key: z.string(),
  value: z.string(),
  value_truncated: z.string().optional(),
  tags: z.array(z.string()),
  score: z.number(),
  matched: z.array(z.enum(["lexical", "vector"])),
});

/** outcomeJson's part of an answer. */
const outcomeOut = {
  mode: z.enum(["hybrid", "lexical"]),
  hits: z.array(HitOut),
  note: z.string().optional(),
};

function hitJson(hit: SearchHit): { [key: string]: JsonValue } {
  return {
    namespace: hit.namespace,
    key: hit.key,
    ...cutValue(hit.value, HIT_VALUE_CHARS),
    tags: hit.tags,
    score: hit.score,
    matched: hit.matched,
  };
}

function outcomeJson(outcome: SearchOutcome): { [key: string]: JsonValue } {
  const out: { [key: string]: JsonValue } = {
    mode: outcome.mode,
    hits: outcome.hits.map(hitJson),
  };
  if (outcome.note) out.note = outcome.note;
  return out;
}

export const searchMemory = tool({
  name: "search_memory",
  title: "Search memory",
  touches: [],
  description:
    "Search a namespace by meaning and by words (hybrid: BM25 + vectors, fused by reciprocal rank). Best hits first.",
  input: z.object({ namespace, query, limit }),
  output: z.object({
    namespace: z.string(),
    query: z.string(),
    ...outcomeOut,
  }),
  annotations: { readOnlyHint: true },
  async handle(memory, args, call) {
    const outcome = await memory.search(
      call.caller,
      args.namespace,
      args.query,
      args.limit ?? 10,
    );
    return json({
      namespace: args.namespace,
      query: args.query,
      ...outcomeJson(outcome),
    });
  },
});

export const crossReference = tool({
  name: "cross_reference",
  title: "Cross-reference memories",
  touches: [],
  description:
    "Search several namespaces at once; each hit names the namespace it came from.",
  input: z.object({
    query,
    namespaces: z.array(namespace).min(1).max(20).describe(
      "Namespaces to search",
    ),
    limit,
  }),
  output: z.object({
    query: z.string(),
    by_namespace: z.record(z.string(), z.number().int()),
    ...outcomeOut,
  }),
  annotations: { readOnlyHint: true },
  async handle(memory, args, call) {
    const outcome = await memory.crossReference(
      call.caller,
      args.query,
      args.namespaces,
      args.limit ?? 10,
    );
    return json({
      query: args.query,
      by_namespace: outcome.by_namespace,
      ...outcomeJson(outcome),
    });
  },
});
