// A script run in a page's main frame like the DevTools console (REPL mode:
// top-level await, redeclarable let/const), its value settled and read back
// as JSON, for execute_js.

import type { CDPSession, Protocol } from "../../platform/puppeteer.ts";
import type { JsonValue } from "../../platform/store/mod.ts";
import { ToolError } from "../kit/mod.ts";
import { OwnPageRefused } from "./automation.ts";

/** The object group every value of one run is kept under, released after it. */
export const GROUP = "agentd-execute-js";

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
export async function run(
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
export function describeException(
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
export function valueOf(result: Protocol.Runtime.RemoteObject): JsonValue {
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
