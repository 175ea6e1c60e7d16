// The execute_js tool: a script evaluated in the page like in the DevTools
// console (top-level await, redeclarable let/const), its value returned.

import { z } from "zod";
import type { CDPSession, Protocol } from "../../platform/puppeteer.ts";
import type { JsonValue } from "../../platform/store.ts";
import { toolDefiner, ToolError } from "../kit/mod.ts";
import { type BrowserAutomation, OwnPageRefused } from "./automation.ts";
import { slice, within } from "./page_ops.ts";

const tool = toolDefiner<BrowserAutomation>();

const GROUP = "agentd-execute-js";

function evaluate(
  cdp: CDPSession,
  expression: string,
  timeoutMs: number,
  context: string,
): Promise<Protocol.Runtime.EvaluateResponse> {
  return cdp.send("Runtime.evaluate", {
    expression,
    uniqueContextId: context,
    replMode: true,
    awaitPromise: true,
    returnByValue: false,
    userGesture: true,
    timeout: timeoutMs,
    objectGroup: GROUP,
  });
}

/**
 * The settled value: in REPL mode a promise the script ends with is returned
 * as is (as in the console), so it is awaited here; objects are then fetched
 * by value.
 */
async function settle(
  cdp: CDPSession,
  evaluated: Protocol.Runtime.EvaluateResponse,
): Promise<Protocol.Runtime.EvaluateResponse> {
  const result = evaluated.result;
  if (evaluated.exceptionDetails || result.objectId === undefined) {
    return evaluated;
  }
  if (result.subtype === "promise") {
    const awaited = await cdp.send("Runtime.awaitPromise", {
      promiseObjectId: result.objectId,
      returnByValue: false,
    });
    return await settle(cdp, awaited);
  }
  if (
    result.type === "function" || result.subtype === "node" ||
    result.subtype === "error"
  ) {
    return evaluated;
  }
  const byValue = await cdp.send("Runtime.callFunctionOn", {
    objectId: result.objectId,
    functionDeclaration: "function () { return this; }",
    returnByValue: true,
  });
  return byValue.exceptionDetails
    ? { result: { ...result, value: result.description ?? null } }
    : { result: { ...byValue.result, subtype: result.subtype } };
}

/**
 * The main frame's page-world context, once its origin is checked: the
 * script runs in that document or nowhere, since a navigation after the
 * check destroys the context (agentd's own origin is refused by `act`, and
 * a page cannot slip onto it between that check and the script).
 */
async function checkedContext(
  cdp: CDPSession,
  refused: (origin: string) => boolean,
): Promise<string> {
  const { frameTree } = await cdp.send("Page.getFrameTree");
  const contexts: Protocol.Runtime.ExecutionContextDescription[] = [];
  const created = (event: Protocol.Runtime.ExecutionContextCreatedEvent) => {
    contexts.push(event.context);
  };
  // Runtime.enable reports every existing context before it answers.
  cdp.on("Runtime.executionContextCreated", created);
  try {
    await cdp.send("Runtime.enable");
  } finally {
    cdp.off("Runtime.executionContextCreated", created);
  }
  const context = contexts.findLast((candidate) =>
    candidate.auxData?.frameId === frameTree.frame.id &&
    candidate.auxData?.isDefault === true
  );
  if (context === undefined) {
    throw new ToolError(
      "The page has no script context yet (it is loading); try again once it has loaded",
    );
  }
  if (refused(context.origin)) {
    throw new OwnPageRefused("this tab", context.origin);
  }
  return context.uniqueId;
}

/** Evaluates the script (as a function body when it returns at top level) and settles its value. */
async function run(
  cdp: CDPSession,
  script: string,
  options: { timeout: number; refused: (origin: string) => boolean },
): Promise<{ evaluated: Protocol.Runtime.EvaluateResponse; wrapped: boolean }> {
  const { timeout } = options;
  const context = await checkedContext(cdp, options.refused);
  let evaluated = await evaluate(cdp, script, timeout, context);
  let wrapped = false;
  const thrown = evaluated.exceptionDetails?.exception;
  if (
    thrown?.className === "SyntaxError" &&
    /Illegal return/.test(thrown.description ?? "")
  ) {
    // A script with a top-level return is a function body.
    wrapped = true;
    evaluated = await evaluate(
      cdp,
      `(async () => {\n${script}\n})()`,
      timeout,
      context,
    );
  }
  return { evaluated: await settle(cdp, evaluated), wrapped };
}

/** `Error: boom (line 2, column 7)`, from an exception the script threw. */
function describeException(
  details: Protocol.Runtime.ExceptionDetails,
  wrapped: boolean,
): string {
  const description = details.exception?.description ??
    (details.exception?.value !== undefined
      ? JSON.stringify(details.exception.value)
      : details.text);
  const first = description.split("\n")[0];
  const frame = details.stackTrace?.callFrames[0];
  if (frame === undefined) return first;
  // Frames count from 0; a wrapped script starts one line down.
  const line = frame.lineNumber + (wrapped ? 0 : 1);
  return `${first} (line ${line}, column ${frame.columnNumber + 1})`;
}

/** The value as JSON: DOM nodes, functions and errors by their description. */
function valueOf(result: Protocol.Runtime.RemoteObject): JsonValue {
  if (result.type === "undefined") return null;
  if (result.unserializableValue !== undefined) {
    return result.unserializableValue;
  }
  if (
    result.type === "function" || result.type === "symbol" ||
    result.subtype === "node" || result.subtype === "error"
  ) {
    return result.description ?? result.type;
  }
  return result.value ?? null;
}

export const executeJs = tool({
  name: "execute_js",
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

export const scriptTools = [executeJs];
