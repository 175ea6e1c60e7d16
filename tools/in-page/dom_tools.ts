// DOM tools, run by the content script in the page: structure, text,
// waiting for elements, filling fields.

import { z } from "zod";
import { toolDefiner } from "../kit/mod.ts";
import type { InPage } from "./in_page.ts";
import { selectorParam, tabParam } from "./params.ts";

const tool = toolDefiner<InPage>();

const MAX_WAIT_MS = 120_000;

export const getDom = tool({
  name: "get_dom",
  title: "Read DOM",
  touches: [],
  description:
    "The DOM of the page (or of the first element matching a CSS selector) as HTML, as it is now (after scripts ran). With include_styles, each element carries data-computed-style with its computed display, visibility, position, size, colours, font and opacity. Long DOMs are cut at the server's text budget (truncated: true).",
  input: z.object({
    selector: selectorParam.optional().describe(
      "CSS selector of the root element (default: the whole document)",
    ),
    include_styles: z.boolean().optional().describe(
      "Add each element's computed key styles (default false)",
    ),
    tab_id: tabParam,
  }),
  output: z.object({
    url: z.string(),
    selector: z.string().nullable(),
    include_styles: z.boolean(),
    elements: z.number().int(),
    html: z.string(),
    truncated: z.boolean(),
  }),
  annotations: { readOnlyHint: true },
  handle(ctx, { selector, include_styles, tab_id }, call) {
    return ctx.act(call, "get_dom", "dom.get", {
      selector,
      include_styles: include_styles ?? false,
      tab_id,
      max_chars: ctx.config.text_budget,
    });
  },
});

export const getTextContent = tool({
  name: "get_text_content",
  title: "Read text content",
  touches: [],
  description:
    "The text content of the first element matching a CSS selector, whitespace collapsed (hidden text included, as textContent). Also says how many elements match.",
  input: z.object({
    selector: selectorParam.describe(
      "CSS selector of the element (body for the whole page)",
    ),
    tab_id: tabParam,
  }),
  output: z.object({
    url: z.string(),
    selector: z.string(),
    matches: z.number().int(),
    text: z.string(),
    length: z.number().int(),
    truncated: z.boolean(),
  }),
  annotations: { readOnlyHint: true },
  handle(ctx, { selector, tab_id }, call) {
    return ctx.act(call, "get_text_content", "dom.text", {
      selector,
      tab_id,
      max_chars: ctx.config.text_budget,
    });
  },
});

export const waitForElement = tool({
  name: "wait_for_element",
  title: "Wait for element",
  touches: [],
  description:
    "Waits until an element matching a CSS selector is in the page (watching DOM mutations), then describes it; fails after timeout milliseconds.",
  input: z.object({
    selector: selectorParam.describe("CSS selector to wait for"),
    timeout: z.number().int().min(0).max(MAX_WAIT_MS).optional().describe(
      `Milliseconds to wait (default 5000, at most ${MAX_WAIT_MS})`,
    ),
    tab_id: tabParam,
  }),
  output: z.object({
    url: z.string(),
    selector: z.string(),
    found: z.literal(true),
    waited_ms: z.number().int(),
    element: z.object({
      tag: z.string(),
      id: z.string().nullable(),
      text: z.string(),
      visible: z.boolean(),
    }),
  }),
  annotations: { readOnlyHint: true },
  handle(ctx, { selector, timeout, tab_id }, call) {
    const timeoutMs = timeout ?? 5_000;
    return ctx.act(call, "wait_for_element", "dom.wait", {
      selector,
      timeout_ms: timeoutMs,
      tab_id,
    }, { extraTimeoutMs: timeoutMs });
  },
});

export const fillForm = tool({
  name: "fill_form",
  title: "Fill form",
  touches: [],
  description:
    "Fills one field as a user would: sets the value of an input, textarea or contenteditable (through the native setter, so frameworks notice), picks a <select> option by value or text, or checks a checkbox/radio (value true/false), then fires input and change. Returns the field's value afterwards.",
  input: z.object({
    selector: selectorParam.describe("CSS selector of the field"),
    value: z.string().max(100_000).describe("Value to put in the field"),
    tab_id: tabParam,
  }),
  output: z.object({
    url: z.string(),
    selector: z.string(),
    value: z.string(),
  }),
  annotations: { destructiveHint: false },
  handle(ctx, { selector, value, tab_id }, call) {
    return ctx.act(call, "fill_form", "dom.fill", { selector, value, tab_id });
  },
});
