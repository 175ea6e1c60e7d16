// An accessibility tree as snapshot shows it: one indented line per node
// that says something, a diff of two snapshots' lines, and the token
// estimate its budget uses.

import type { ElementHandle } from "../../platform/puppeteer.ts";

/** Roughly four characters a token, the usual estimate for English and markup. */
export const CHARS_PER_TOKEN = 4;

export interface AxNode {
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

export interface Line {
  /** What the diff compares: the line without its ref. */
  plain: string;
  ref: string;
}

/**
 * A name as a reader sees it: whitespace runs as one space, none at the ends
 * (Chromium 150 keeps a label's trailing space in its input's name).
 */
function nameOf(node: AxNode): string {
  return node.name?.replace(/\s+/g, " ").trim() ?? "";
}

function describe(node: AxNode, name: string): string {
  const role = node.role === "StaticText" ? "text" : node.role;
  let line = role;
  if (name) line += ` ${JSON.stringify(name.slice(0, 300))}`;
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

export function flatten(
  node: AxNode,
  depth: number,
  out: Line[],
  register: (node: AxNode) => string,
): void {
  const name = nameOf(node);
  const silent = SILENT.has(node.role) && !name;
  const next = silent ? depth : depth + 1;
  if (!silent) {
    out.push({
      plain: `${"  ".repeat(depth)}- ${describe(node, name)}`,
      ref: register(node),
    });
  }
  for (const child of node.children ?? []) {
    flatten(child, next, out, register);
  }
}

/** Lines added and removed, matched as multisets after the common head and tail. */
export function diffLines(before: string[], after: Line[]): Line[] {
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

export function rendered(line: Line): string {
  return line.ref ? `${line.plain} [ref=${line.ref}]` : line.plain;
}
