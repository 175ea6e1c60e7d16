// Selectors an agent writes: CSS, `text=…`, `role=button[name="Save"]` and
// `xpath=…`, translated to puppeteer's query handlers, and element lookup
// that fails with a message naming the selector.

import type { ElementHandle, Page } from "../../platform/puppeteer.ts";
import { ToolError } from "../kit/mod.ts";
import { isRef, resolveRef } from "./refs.ts";
import { messageOf } from "../../platform/errors.ts";

/** A double-quoted argument for puppeteer's `::-p-text("…")`. */
function quoted(value: string): string {
  return `"${value.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
}

const ROLE = /^role=([A-Za-z-]+)\s*((?:\[[^\]]*\]\s*)*)$/;

/**
 * `text=Save` → `::-p-text("Save")` (the smallest elements containing the
 * text); `role=button[name="Save"]` → `::-p-aria([role="button"][name="Save"])`
 * (accessible role and name); `xpath=//a` → `::-p-xpath(//a)`; `css=…` and
 * anything else is CSS (puppeteer's own `::-p-…` forms included).
 */
export function toQuery(selector: string): string {
  const trimmed = selector.trim();
  if (trimmed.startsWith("text=")) {
    let text = trimmed.slice(5).trim();
    const quote = text.match(/^(["'])(.*)\1$/s);
    if (quote) text = quote[2];
    return `::-p-text(${quoted(text)})`;
  }
  const role = trimmed.match(ROLE);
  if (role) {
    const names = role[2].trim().replaceAll(/\]\s+\[/g, "][");
    return `::-p-aria([role="${role[1]}"]${names})`;
  }
  if (trimmed.startsWith("role=")) {
    throw new ToolError(
      `Invalid selector "${selector}": expected role=<role> with optional [name="…"], e.g. role=button[name="Save"]`,
    );
  }
  if (trimmed.startsWith("xpath=")) return `::-p-xpath(${trimmed.slice(6)})`;
  if (trimmed.startsWith("css=")) return trimmed.slice(4);
  return trimmed;
}

export const SELECTOR_HELP =
  'CSS selector, text=Visible text, role=button[name="Save"], xpath=//expr or a snapshot ref (ref=s1e5)';

/**
 * The first element matching `selector`, waiting up to `timeoutMs` for one to
 * appear (0: look once). Throws a ToolError naming the selector.
 */
export async function findElement(
  page: Page,
  selector: string,
  timeoutMs: number,
): Promise<ElementHandle> {
  if (isRef(selector)) return await resolveRef(page, selector);
  const query = toQuery(selector);
  let found: ElementHandle | null;
  try {
    // Looking once first also reports a selector that does not parse at once.
    found = await page.$(query);
    if (found === null && timeoutMs > 0) {
      found = await page.waitForSelector(query, { timeout: timeoutMs });
    }
  } catch (error) {
    throw selectorError(selector, error, timeoutMs);
  }
  if (found === null) throw noMatch(selector, timeoutMs);
  return found;
}

/** Every element matching `selector`, now (no waiting). */
export async function findAll(
  page: Page,
  selector: string,
): Promise<ElementHandle[]> {
  try {
    return await page.$$(toQuery(selector));
  } catch (error) {
    throw selectorError(selector, error, 0);
  }
}

function noMatch(selector: string, timeoutMs: number): ToolError {
  return new ToolError(
    `No element matches selector "${selector}"` +
      (timeoutMs > 0 ? ` (waited ${timeoutMs} ms)` : "") +
      "; check it with get_html, or wait_for it first",
  );
}

/** A timeout becomes "no element matches"; a parse failure names the accepted forms. */
export function selectorError(
  selector: string,
  error: unknown,
  timeoutMs: number,
): ToolError {
  if (error instanceof ToolError) return error;
  const message = messageOf(error);
  if (error instanceof Error && error.name === "TimeoutError") {
    return noMatch(selector, timeoutMs);
  }
  if (
    /not a valid selector|SyntaxError|Unknown selector|parse/i.test(message)
  ) {
    return new ToolError(
      `Invalid selector "${selector}": ${
        message.split("\n")[0]
      }. Use a ${SELECTOR_HELP}`,
    );
  }
  return new ToolError(
    `Selector "${selector}" failed: ${message.split("\n")[0]}`,
  );
}
