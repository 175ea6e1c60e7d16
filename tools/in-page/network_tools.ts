// intercept_network: the extension logs every request whose URL matches a
// pattern (webRequest, observing only: MV3 cannot hold requests), and the
// log is read back here.

import { z } from "zod";
import { toolDefiner } from "../kit/mod.ts";
import { reachesDaemon } from "../../platform/daemon_origin.ts";
import { type InPage, jsonResult, withinBudget } from "./in_page.ts";

const tool = toolDefiner<InPage>();

export const interceptNetwork = tool({
  name: "intercept_network",
  title: "Watch network",
  touches: ["network-log"],
  description:
    "Starts logging the browser's network requests whose URL matches the pattern (* matches anything, e.g. */api/*; without * a substring), in every tab, and returns the requests logged so far for it: URL, method, type, tab, status, error, duration. Call again with the same pattern to read new entries. Requests are observed, not blocked or changed.",
  input: z.object({
    pattern: z.string().min(1).max(2048).describe(
      "URL pattern, e.g. https://example.com/api/*",
    ),
  }),
  output: z.object({
    pattern: z.string(),
    active_patterns: z.array(z.string()),
    count: z.number().int(),
    total: z.number().int(),
    requests: z.array(z.object({
      request_id: z.string(),
      pattern: z.string(),
      url: z.string(),
      method: z.string(),
      type: z.string(),
      tab_id: z.number().int(),
      started: z.string(),
      status: z.number().int().nullable(),
      error: z.string().nullable(),
      duration_ms: z.number().nullable(),
    })),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false },
  async handle(ctx, { pattern }, call) {
    const result = await ctx.act(
      call,
      "intercept_network",
      "network.intercept",
      { pattern },
    );
    const structured = result.structuredContent ?? {};
    // Requests to the daemon itself are not the agent's to see (login codes, dashboard calls).
    const daemon = ctx.ownOrigin();
    const entries =
      (Array.isArray(structured.entries) ? structured.entries : [])
        .filter((entry) =>
          !(typeof entry === "object" && entry !== null &&
            !Array.isArray(entry) &&
            typeof entry.url === "string" && reachesDaemon(entry.url, daemon))
        );
    // The newest entries are the ones worth keeping.
    const requests = withinBudget(entries.toReversed(), ctx.config.text_budget)
      .toReversed();
    return jsonResult({
      pattern,
      active_patterns: structured.patterns ?? [],
      count: requests.length,
      total: entries.length,
      requests,
    });
  },
});
