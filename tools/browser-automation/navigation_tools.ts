// Navigation tools: open a URL, wait for an element, scroll.

import { z } from "zod";
import { json, toolDefiner, ToolError } from "../kit/mod.ts";
import {
  type BrowserAutomation,
  OwnPageRefused,
  WAIT_FOR_MAX_MS,
} from "./automation.ts";
import { scrollPage } from "./in_page.ts";
import { pageState, reasonOf } from "./page_ops.ts";
import { SELECTOR_HELP, selectorError, toQuery } from "./selectors.ts";

const tool = toolDefiner<BrowserAutomation>();

const PROTOCOLS = new Set(["http:", "https:", "about:", "data:"]);

/** The URL to open, or a ToolError saying what would work. */
function parseTarget(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    const guess = /^[\w-]+(\.[\w-]+)+([/:?#].*)?$/.test(raw.trim())
      ? ` (did you mean https://${raw.trim()}?)`
      : "";
    throw new ToolError(
      `"${raw}" is not an absolute URL${guess}; give one like https://example.com/`,
    );
  }
  if (!PROTOCOLS.has(url.protocol)) {
    throw new ToolError(
      `Cannot open ${url.protocol} URLs ("${raw}"): navigate opens http, https, about: and data: URLs`,
    );
  }
  return url;
}

export const navigate = tool({
  name: "navigate",
  title: "Open URL",
  touches: [],
  argKinds: { url: "url" },
  description:
    "Open a URL in this session's browser tab and wait until it has loaded. Returns the final URL (after redirects), title, HTTP status and load time.",
  input: z.object({
    url: z.string().min(1).max(16_384).describe(
      "Absolute URL: https://…, http://…, about:blank or data:…",
    ),
  }),
  output: z.object({
    url: z.string(),
    title: z.string(),
    status: z.number().int().nullable(),
    load_ms: z.number().int(),
  }),
  annotations: { openWorldHint: true },
  handle(ctx, { url }, call) {
    const step = { tool: "navigate", log: { url }, leavesPage: true };
    return ctx.act(call, step, async (page) => {
      const target = parseTarget(url);
      if (ctx.isOwnPage(target.href)) {
        throw new OwnPageRefused("navigate's target", target.href);
      }
      const started = performance.now();
      let response;
      try {
        response = await page.goto(target.href, {
          waitUntil: "load",
          timeout: ctx.config.action_timeout_ms,
        });
      } catch (error) {
        throw new ToolError(`Cannot open ${target.href}: ${reasonOf(error)}`);
      }
      const ms = performance.now() - started;
      ctx.recordPageLoad(page.url(), ms);
      const state = await pageState(page);
      return json({
        url: state.url,
        title: state.title,
        status: response?.status() ?? null,
        load_ms: Math.round(ms),
      });
    });
  },
});

export const waitFor = tool({
  name: "wait_for",
  title: "Wait for page",
  taskSupport: "optional",
  touches: [],
  description:
    `Wait until an element matching the selector is visible on the page (${SELECTOR_HELP}). Fails after the timeout.`,
  input: z.object({
    selector: z.string().min(1).describe(`What to wait for: ${SELECTOR_HELP}`),
    timeout: z.number().int().min(0).max(WAIT_FOR_MAX_MS).optional().describe(
      "Milliseconds to wait (default: the server's action timeout, 30000)",
    ),
  }),
  output: z.object({
    found: z.literal(true),
    selector: z.string(),
    waited_ms: z.number().int(),
    url: z.string(),
  }),
  annotations: { readOnlyHint: true },
  handle(ctx, { selector, timeout }, call) {
    const ms = timeout ?? ctx.config.action_timeout_ms;
    return ctx.act(
      call,
      { tool: "wait_for", log: { selector, timeout_ms: ms }, readOnly: true },
      async (page) => {
        const query = toQuery(selector);
        const started = performance.now();
        try {
          // A cancelled call (a task's tasks/cancel) stops waiting at once.
          await page.waitForSelector(query, {
            visible: true,
            timeout: ms,
            signal: call.signal,
          });
        } catch (error) {
          if (!(error instanceof Error && error.name === "TimeoutError")) {
            throw selectorError(selector, error, ms);
          }
          const hidden = await page.$(query).catch(() => null);
          throw new ToolError(
            `Timed out after ${ms} ms waiting for selector "${selector}" to be visible` +
              (hidden ? " (an element matches but is hidden)" : ""),
          );
        }
        return json({
          found: true,
          selector,
          waited_ms: Math.round(performance.now() - started),
          url: page.url(),
        });
      },
    );
  },
});

export const scroll = tool({
  name: "scroll",
  title: "Scroll page",
  touches: [],
  description:
    "Scroll the page up or down by a number of pixels (default: one viewport height). Returns the new scroll position and whether the top or bottom was reached.",
  input: z.object({
    direction: z.enum(["up", "down"]).describe("up or down"),
    amount: z.number().positive().max(10_000_000).optional().describe(
      "Pixels to scroll (default: the viewport height)",
    ),
  }),
  output: z.object({
    direction: z.enum(["up", "down"]),
    amount: z.number(),
    previous_scroll_y: z.number(),
    scroll_y: z.number(),
    max_scroll_y: z.number(),
    at_top: z.boolean(),
    at_bottom: z.boolean(),
  }),
  annotations: { readOnlyHint: true },
  handle(ctx, { direction, amount }, call) {
    return ctx.act(
      call,
      { tool: "scroll", log: { direction, amount: amount ?? null } },
      async (page) => {
        const moved = await page.evaluate(
          scrollPage,
          direction === "down",
          amount ?? null,
        );
        return json({
          direction,
          amount: moved.step,
          previous_scroll_y: moved.previous,
          scroll_y: moved.now,
          max_scroll_y: moved.max,
          at_top: moved.now <= 0,
          at_bottom: moved.now >= moved.max - 1,
        });
      },
    );
  },
});
