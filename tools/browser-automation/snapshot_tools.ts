// `snapshot` (beyond the documented tool set): the tab's accessibility tree as indented
// lines, iframes included, each element with a ref (refs.ts) that selectors
// accept; a subtree by selector or ref; a max_tokens budget with the cut
// stated; and a diff against the tab's previous snapshot.

import { z } from "zod";
import { toolDefiner, ToolError } from "../kit/mod.ts";
import type { BrowserAutomation } from "./automation.ts";
import { pageState } from "./page_ops.ts";
import { snapshotsOf } from "./refs.ts";
import { findElement, SELECTOR_HELP } from "./selectors.ts";
import type { AxNode, Line } from "./ax_lines.ts";
import { CHARS_PER_TOKEN, diffLines, flatten, rendered } from "./ax_lines.ts";

const tool = toolDefiner<BrowserAutomation>();

export const snapshot = tool({
  name: "snapshot",
  touches: [],
  title: "Accessibility snapshot",
  description:
    "The page's accessibility tree (iframes included) as indented lines: role, name, state and a ref per element. " +
    "Refs (e.g. s2e14) work as the selector of click_element, type_text and the other element tools, " +
    "until the next snapshot or navigation. `selector` (a ref works too) narrows to a subtree; `max_tokens` caps the size " +
    "(the cut is stated); `diff` returns only lines added (+) and removed (-) since this tab's previous snapshot.",
  input: z.object({
    selector: z.string().min(1).optional()
      .describe(`Only the subtree of this element: ${SELECTOR_HELP}`),
    max_tokens: z.number().int().min(100).max(200_000).default(4000)
      .describe("Budget of the answer, in tokens (about 4 characters each)"),
    diff: z.boolean().default(false)
      .describe("Only what changed since the previous snapshot of this tab"),
  }),
  output: z.object({
    snapshot: z.number().int(),
    url: z.string(),
    lines: z.number().int(),
    shown: z.number().int(),
    cut: z.boolean(),
    approx_tokens: z.number().int(),
  }),
  annotations: { readOnlyHint: true, openWorldHint: true },
  handle(ctx, { selector, max_tokens, diff }, call) {
    return ctx.act(
      call,
      { tool: "snapshot", log: { selector: selector ?? null }, readOnly: true },
      async (page) => {
        const state = snapshotsOf(page);
        const root = selector === undefined
          ? undefined
          : await findElement(page, selector, ctx.config.selector_timeout_ms);
        const tree = await page.accessibility.snapshot({
          includeIframes: true,
          interestingOnly: true,
          root,
        });
        if (!tree) {
          throw new ToolError(
            selector === undefined
              ? "The page has no accessibility tree (is it blank?)"
              : `The element "${selector}" has no accessible content`,
          );
        }
        const number = state.latest + 1;
        const refs = new Map<string, AxNode>();
        const lines: Line[] = [];
        flatten(tree, 0, lines, (node) => {
          const ref = `s${number}e${refs.size + 1}`;
          refs.set(ref, node);
          return ref;
        });
        const previous = state.lines;
        const hadPrevious = state.latest > 0;
        state.latest = number;
        state.refs = refs;
        state.navigatedTo = undefined;
        state.lines = lines.map((line) => line.plain);
        const shown = diff && hadPrevious ? diffLines(previous, lines) : lines;
        const budget = max_tokens * CHARS_PER_TOKEN;
        const { url, title } = await pageState(page);
        const header = `snapshot ${number} of ${url} (${title})${
          diff
            ? (hadPrevious ? ", diff vs the previous" : ", first: in full")
            : ""
        }\n`;
        let text = header;
        let count = 0;
        for (const line of shown) {
          const next = `${rendered(line)}\n`;
          // Room kept for the closing note.
          if (text.length + next.length > budget - 300) break;
          text += next;
          count++;
        }
        if (count < shown.length) {
          text +=
            `[cut at max_tokens=${max_tokens}: ${count} of ${shown.length} lines shown; ` +
            `narrow with selector (a ref of a shown line works) or raise max_tokens]`;
        } else if (diff && hadPrevious && shown.length === 0) {
          text += "(no change)";
        }
        return {
          content: [{ type: "text", text }],
          structuredContent: {
            snapshot: number,
            url,
            lines: shown.length,
            shown: count,
            cut: count < shown.length,
            approx_tokens: Math.ceil(text.length / CHARS_PER_TOKEN),
          },
        };
      },
    );
  },
});
