// The execute_js tool: a script evaluated in the page like in the DevTools
// console (top-level await, redeclarable let/const), its value returned.

import { z } from "zod";
import { toolDefiner, ToolError } from "../kit/mod.ts";
import type { BrowserAutomation } from "./automation.ts";
import { slice, within } from "./page_ops.ts";
import { describeException, GROUP, run, valueOf } from "./page_script.ts";

const tool = toolDefiner<BrowserAutomation>();

export const executeJs = tool({
  name: "execute_js",
  title: "Run JavaScript",
  touches: ["page-script"],
  description:
    "Run JavaScript in the page and return its value as JSON: the last expression's value, or what a top-level `return` gives; promises are awaited (top-level await works). DOM nodes and functions come back as their description.",
  input: z.object({
    script: z.string().min(1).max(1_000_000).describe(
      "JavaScript, e.g. document.title, or await fetch('/api').then(r => r.json())",
    ),
  }),
  // The value (any JSON) as `result`, or over the budget the start of its
  // JSON text as `result_json` with `truncated`.
  output: z.object({
    type: z.string(),
    result: z.unknown().optional(),
    truncated: z.literal(true).optional(),
    result_json: z.string().optional(),
  }),
  annotations: { destructiveHint: true, openWorldHint: true },
  handle(ctx, { script }, call) {
    return ctx.act(
      call,
      { tool: "execute_js", log: { script_chars: script.length } },
      async (page) => {
        const cdp = await page.createCDPSession();
        try {
          const timeout = ctx.config.action_timeout_ms;
          const started = performance.now();
          const tooLong = new ToolError(
            `The script did not finish within ${timeout} ms (action_timeout_ms); it may still run in the page`,
          );
          const outcome = await within(
            run(cdp, script, {
              timeout,
              refused: (origin) => ctx.isOwnPage(origin),
            }).catch((error: unknown) => {
              // A busy loop is terminated by Runtime.evaluate's own timeout ("Internal error").
              if (performance.now() - started >= timeout) throw tooLong;
              throw error;
            }),
            timeout,
            undefined,
          );
          if (outcome === undefined) throw tooLong;
          const { evaluated, wrapped } = outcome;
          if (evaluated.exceptionDetails) {
            throw new ToolError(
              `The script threw ${
                describeException(evaluated.exceptionDetails, wrapped)
              }`,
            );
          }
          const value = valueOf(evaluated.result);
          const type = evaluated.result.subtype ?? evaluated.result.type;
          const text = JSON.stringify(value, null, 2) ?? "null";
          const part = slice(text, 0, ctx.config.text_budget);
          const truncated = part.next !== null;
          return {
            content: [{
              type: "text",
              text: truncated
                ? `${part.text}\n\n… truncated, ${
                  part.total - part.text.length
                } more characters; return a smaller value (a slice, or selected fields)`
                : text,
            }],
            structuredContent: truncated
              ? { type, truncated: true, result_json: part.text }
              : { type, result: value },
          };
        } finally {
          await cdp.send("Runtime.releaseObjectGroup", { objectGroup: GROUP })
            .catch(() => undefined);
          await cdp.detach().catch(() => undefined);
        }
      },
    );
  },
});
