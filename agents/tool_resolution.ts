// An agent's `tools` entries → tool names: a gateway name
// (`memory__store_memory`), a bare tool name when exactly one server has it
// (`store_memory`), or a server name for all of its tools (`memory`; `gateway`
// for the gateway's own eight). Unknown or ambiguous entries are one Invalid that
// lists candidates for each. Server and tool come from each listing's origin
// (its `_meta`), never from splitting a name: a long one is shortened.

import { Invalid } from "./errors.ts";
import type { JsonValue } from "../platform/store/mod.ts";
import type { ModelTool } from "./model.ts";

const MAX_CANDIDATES = 20;

/** A tool an agent may be given: its name, and the server and tool it is. */
export interface AvailableTool {
  name: string;
  server: string;
  tool: string;
}

/** A listed tool as resolution sees it; one naming no origin is known by its name only. */
export function availableOf(tool: ModelTool): AvailableTool {
  return {
    name: tool.name,
    server: tool.origin?.server ?? "",
    tool: tool.origin?.tool ?? tool.name,
  };
}

export function resolveToolEntries(
  entries: readonly string[],
  tools: readonly AvailableTool[],
): string[] {
  const available = tools.map((tool) => tool.name);
  const names = new Set(available);
  const byServer = new Map<string, string[]>();
  const byTool = new Map<string, string[]>();
  for (const { name, server, tool } of tools) {
    if (server !== "") {
      byServer.set(server, [...byServer.get(server) ?? [], name]);
    }
    byTool.set(tool, [...byTool.get(tool) ?? [], name]);
  }
  const resolved: string[] = [];
  const problems: { [key: string]: JsonValue }[] = [];
  for (const entry of entries) {
    if (names.has(entry)) {
      resolved.push(entry);
      continue;
    }
    const ofServer = byServer.get(entry);
    if (ofServer) {
      resolved.push(...ofServer);
      continue;
    }
    const matches = byTool.get(entry) ?? [];
    if (matches.length === 1) {
      resolved.push(matches[0]);
    } else if (matches.length > 1) {
      problems.push({ entry, problem: "ambiguous", candidates: matches });
    } else {
      problems.push({
        entry,
        problem: "unknown",
        candidates: candidatesFor(entry, available),
      });
    }
  }
  if (problems.length > 0) {
    const described = problems.map((p) =>
      `"${p.entry}" is ${p.problem}` +
      (Array.isArray(p.candidates) && p.candidates.length > 0
        ? ` (did you mean ${p.candidates.slice(0, 5).join(", ")}?)`
        : "")
    );
    throw new Invalid(
      `Cannot resolve tools: ${described.join("; ")}. ` +
        "Use a gateway name (<server>__<tool>), a tool name only one server has, or a server name.",
      { tools: problems, servers: [...byServer.keys()].sort() },
    );
  }
  return [...new Set(resolved)];
}

/** Names sharing a word with the entry, closest first. */
function candidatesFor(entry: string, available: readonly string[]): string[] {
  const needle = entry.toLowerCase();
  const words = needle.split(/[^a-z0-9]+/).filter((word) => word.length > 2);
  const scored = available.map((name) => {
    const lower = name.toLowerCase();
    let score = lower.includes(needle) ? 10 : 0;
    for (const word of words) if (lower.includes(word)) score++;
    return { name, score };
  }).filter((candidate) => candidate.score > 0);
  scored.sort((a, b) => b.score - a.score || a.name.localeCompare(b.name));
  return scored.slice(0, MAX_CANDIDATES).map((candidate) => candidate.name);
}
