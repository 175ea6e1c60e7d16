// chrome.debugger for actions that need the DevTools protocol on a tab:
// attach, run, detach; and the accessibility tree made readable.

/// <reference lib="dom" />
/// <reference types="@types/chrome" />

import type { Json } from "./json.ts";

function jsonOf(value: unknown): Json {
  return JSON.parse(JSON.stringify(value ?? null));
}

export async function withDebugger<T>(
  tabId: number,
  work: (target: chrome.debugger.Debuggee) => Promise<T>,
): Promise<T> {
  const target = { tabId };
  await chrome.debugger.attach(target, "1.3");
  try {
    return await work(target);
  } finally {
    await chrome.debugger.detach(target).catch(() => {});
  }
}

interface AxValue {
  value?: unknown;
}
export interface AxNode {
  nodeId: string;
  ignored?: boolean;
  role?: AxValue;
  name?: AxValue;
  value?: AxValue;
  childIds?: string[];
  properties?: { name: string; value: AxValue }[];
}

export function isAxNode(value: unknown): value is AxNode {
  return typeof value === "object" && value !== null && "nodeId" in value;
}

/** The tree without ignored and unnamed generic nodes, as nested {role, name, children}. */
export function pruneTree(
  nodes: AxNode[],
  maxNodes: number,
): { tree: Json; count: number; truncated: boolean } {
  const byId = new Map(nodes.map((node) => [node.nodeId, node]));
  let count = 0;
  let truncated = false;
  const build = (node: AxNode): Json[] => {
    const children = (node.childIds ?? []).flatMap((id) => {
      const child = byId.get(id);
      return child ? build(child) : [];
    });
    const role = String(node.role?.value ?? "");
    const name = String(node.name?.value ?? "");
    const skip = node.ignored ||
      ((role === "generic" || role === "none" || role === "StaticText") &&
        name === "") ||
      role === "InlineTextBox";
    if (skip) return children;
    if (count >= maxNodes) {
      truncated = true;
      return [];
    }
    count++;
    const entry: { [key: string]: Json } = { role, name };
    const value = node.value?.value;
    if (typeof value === "string" && value !== "") entry.value = value;
    for (const property of node.properties ?? []) {
      if (
        ["checked", "disabled", "expanded", "level", "required", "focused"]
          .includes(property.name)
      ) {
        entry[property.name] = jsonOf(property.value.value);
      }
    }
    if (children.length) entry.children = children;
    return [entry];
  };
  const root = nodes[0];
  const tree = root ? build(root) : [];
  return { tree: tree.length === 1 ? tree[0] : tree, count, truncated };
}
