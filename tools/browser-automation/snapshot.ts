// `snapshot` (beyond the seed): the tab's accessibility tree as indented
// lines, iframes included, each element with a ref (refs.ts) that selectors
// accept; a subtree by selector or ref; a max_tokens budget with the cut
// stated; and a diff against the tab's previous snapshot.

import { z } from "zod";
import type { ElementHandle } from "../../platform/puppeteer.ts";
import { toolDefiner, ToolError } from "../kit/mod.ts";
import type { BrowserAutomation } from "./automation.ts";
import { pageState } from "./page_ops.ts";
import { snapshotsOf } from "./refs.ts";
import { findElement, SELECTOR_HELP } from "./selectors.ts";

const tool = toolDefiner<BrowserAutomation>();

/** Roughly four characters a token, the usual estimate for English and markup. */
const CHARS_PER_TOKEN = 4;

interface AxNode {
  role: string;
  name?: string;
  value?: string | number;
  checked?: boolean | "mixed";
  pressed?: boolean | "mixed";
  selected?: boolean;
  expanded?: boolean;
  disabled?: boolean;
  focused?: boolean;
  level?: number;
  url?: string;
  children?: AxNode[];
  elementHandle(): Promise<ElementHandle | null>;
}

/** Containers that say nothing by themselves: their children take their place. */
const SILENT = new Set(["generic", "none", "presentation", "LineBreak"]);

interface Line {
  /** What the diff compares: the line without its ref. */
  plain: string;
  ref: string;
}

function describe(node: AxNode): string {
  const role = node.role === "StaticText" ? "text" : node.role;
  let line = role;
  if (node.name) line += ` ${JSON.stringify(node.name.slice(0, 300))}`;
  if (node.value !== undefined && node.value !== "") {
    line += ` value=${JSON.stringify(String(node.value).slice(0, 200))}`;
  }
  for (
    const flag of [
      "checked",
      "pressed",
      "selected",
      "expanded",
      "disabled",
      "focused",
    ] as const
  ) {
    const value = node[flag];
    if (value === true) line += ` [${flag}]`;
    else if (value === "mixed") line += ` [${flag}=mixed]`;
  }
  if (node.level !== undefined) line += ` [level=${node.level}]`;
  if (node.url) line += ` <${node.url.slice(0, 200)}>`;
  return line;
}

function flatten(
  node: AxNode,
  depth: number,
  out: Line[],
  register: (node: AxNode) => string,
): void {
  const silent = SILENT.has(node.role) && !node.name;
  const next = silent ? depth : depth + 1;
  if (!silent) {
    out.push({
      plain: `${"  ".repeat(depth)}- ${describe(node)}`,
      ref: register(node),
    });
  }
  for (const child of node.children ?? []) {
    flatten(child, next, out, register);
  }
}

/** Lines added and removed, matched as multisets after the common head and tail. */
function diffLines(before: string[], after: Line[]): Line[] {
  let head = 0;
  while (
    head < before.length && head < after.length &&
    before[head] === after[head].plain
  ) head++;
  let tail = 0;
  while (
    tail < before.length - head && tail < after.length - head &&
    before[before.length - 1 - tail] === after[after.length - 1 - tail].plain
  ) tail++;
  const old = before.slice(head, before.length - tail);
  const now = after.slice(head, after.length - tail);
  const remaining = new Map<string, number>();
  for (const line of old) remaining.set(line, (remaining.get(line) ?? 0) + 1);
  const added: Line[] = [];
  for (const line of now) {
    const count = remaining.get(line.plain) ?? 0;
    if (count > 0) remaining.set(line.plain, count - 1);
    else added.push({ plain: `+ ${line.plain.trimStart()}`, ref: line.ref });
  }
  const removed: Line[] = [];
  for (const [line, count] of remaining) {
    for (let i = 0; i < count; i++) {
      removed.push({ plain: `- ${line.trimStart()}`, ref: "" });
    }
  }
  return [...removed, ...added];
}

function rendered(line: Line): string {
  return line.ref ? `${line.plain} [ref=${line.ref}]` : line.plain;
}

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
