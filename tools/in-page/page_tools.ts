// Page-level tools: state (with the tab list), scripts in the page's own
// world, and the accessibility tree.

import { z } from "zod";
import { toolDefiner } from "../kit/mod.ts";
import { type InPage, jsonResult } from "./in_page.ts";
import { tabParam } from "./params.ts";

const tool = toolDefiner<InPage>();

/** A tab as the extension describes it. */
const Tab = z.object({
  tab_id: z.number().int().nullable(),
  window_id: z.number().int(),
  url: z.string().nullable(),
  title: z.string().nullable(),
  active: z.boolean(),
  status: z.string().nullable(),
});

export const getPageState = tool({
  name: "get_page_state",
  title: "Read page state",
  touches: [],
  description:
    "The tab's URL, title and load state (tab status and document.readyState), scroll and viewport, the page's recent console output, a summary of DOM mutations since it loaded, and the list of open tabs (their tab_id values name a tab for every other tool).",
  input: z.object({ tab_id: tabParam }),
  // The tab's description, and the page's state where the page could be
  // read (an http(s) or file page that is not agentd's own).
  output: z.object({
    url: z.string().nullable(),
    title: z.string().nullable(),
    active: z.boolean(),
    window_id: z.number().int(),
    tab_id: z.number().int().nullable().optional(),
    status: z.string().nullable().optional(),
    refused: z.string().optional(),
    tab_status: z.string().nullable().optional(),
    ready_state: z.string().optional(),
    referrer: z.string().optional(),
    visibility: z.string().optional(),
    scroll: z.object({ x: z.number(), y: z.number() }).optional(),
    viewport: z.object({ width: z.number(), height: z.number() }).optional(),
    elements: z.number().int().optional(),
    forms: z.number().int().optional(),
    links: z.number().int().optional(),
    console: z.array(z.looseObject({ text: z.string() })).optional(),
    console_total: z.number().int().optional(),
    mutations: z.looseObject({}).optional(),
    tabs: z.array(Tab),
  }),
  annotations: { readOnlyHint: true },
  async handle(ctx, { tab_id }, call) {
    const state = await ctx.act(call, "get_page_state", "page.state", {
      tab_id,
    });
    const tabs = await ctx.act(call, "get_page_state", "tabs.list", {});
    const structured = {
      ...state.structuredContent,
      ...tabs.structuredContent,
    };
    return {
      content: [{ type: "text", text: JSON.stringify(structured, null, 2) }],
      structuredContent: structured,
    };
  },
});

export const executeJs = tool({
  name: "execute_js",
  title: "Run JavaScript",
  touches: ["page-script"],
  description:
    "Runs JavaScript in the page's own context (its globals, as in the DevTools console) and returns the value as JSON (awaited when a promise; a top-level return makes the script a function body; DOM nodes come back as their HTML). Pages whose Content-Security-Policy forbids eval refuse it.",
  input: z.object({
    script: z.string().min(1).max(100_000).describe("JavaScript source"),
    tab_id: tabParam,
  }),
  output: z.object({
    tab_id: z.number().int(),
    url: z.string().nullable(),
    // Any JSON value; its JSON text cut to the budget when `truncated` says so.
    value: z.unknown(),
    truncated: z.string().optional(),
  }),
  annotations: { destructiveHint: true, openWorldHint: true },
  async handle(ctx, { script, tab_id }, call) {
    const result = await ctx.act(call, "execute_js", "script.run", {
      script,
      tab_id,
    });
    const found = result.structuredContent ?? {};
    const text = JSON.stringify(found.value ?? null);
    if (text.length <= ctx.config.text_budget) return result;
    return jsonResult({
      ...found,
      value: text.slice(0, ctx.config.text_budget),
      truncated:
        `the value's JSON has ${text.length} characters; the first ${ctx.config.text_budget} are given as text`,
    });
  },
});

export const getAccessibilityTree = tool({
  name: "get_accessibility_tree",
  title: "Read accessibility tree",
  touches: [],
  description:
    "The tab's accessibility tree as the browser computes it (roles, accessible names, values, states), without ignored and unnamed generic nodes. Read through the extension's debugger permission: Chrome shows a 'started debugging this browser' bar while it runs.",
  input: z.object({ tab_id: tabParam }),
  output: z.object({
    tab_id: z.number().int(),
    url: z.string().nullable(),
    // One node, or a list of them: {role, name, value?, properties?, children?}.
    tree: z.unknown(),
    count: z.number().int(),
    truncated: z.boolean(),
  }),
  annotations: { readOnlyHint: true },
  handle(ctx, { tab_id }, call) {
    return ctx.act(call, "get_accessibility_tree", "a11y.tree", {
      tab_id,
      max_nodes: Math.floor(ctx.config.text_budget / 40),
    });
  },
});
