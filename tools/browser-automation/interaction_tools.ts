// Interaction tools: click, type, fill and submit forms, choose options.

import { z } from "zod";
import type { ElementHandle, Page } from "../../platform/puppeteer.ts";
import { json, toolDefiner, ToolError } from "../kit/mod.ts";
import type { BrowserAutomation } from "./automation.ts";
import {
  chooseOption,
  clearField,
  currentValue,
  describeElement,
  fieldKind,
  fireChange,
  focusAtEnd,
  isChecked,
  type OptionChoice,
  setValue,
  submitFormOf,
} from "./in_page.ts";
import { bounded, pageState, reasonOf, withNavigation } from "./page_ops.ts";
import { findElement, SELECTOR_HELP } from "./selectors.ts";

const tool = toolDefiner<BrowserAutomation>();

const selectorParam = z.string().min(1).describe(SELECTOR_HELP);

export const clickElement = tool({
  name: "click_element",
  title: "Click element",
  touches: [],
  description:
    `Click an element by selector (${SELECTOR_HELP}), or a point by x and y in viewport pixels (the screenshot's coordinates). Waits for a navigation the click starts.`,
  input: z.object({
    selector: selectorParam.optional().describe(
      `Element to click: ${SELECTOR_HELP}. Give this, or x and y`,
    ),
    x: z.number().min(0).optional().describe("Viewport x in pixels (with y)"),
    y: z.number().min(0).optional().describe("Viewport y in pixels (with x)"),
  }),
  output: z.object({
    clicked: z.string(),
    navigated: z.boolean(),
    url: z.string(),
    title: z.string(),
  }),
  annotations: { destructiveHint: true, openWorldHint: true },
  handle(ctx, { selector, x, y }, call) {
    return ctx.act(
      call,
      {
        tool: "click_element",
        log: { selector: selector ?? null, x: x ?? null, y: y ?? null },
      },
      async (page) => {
        let clicked: string;
        let navigated: boolean;
        if (selector !== undefined) {
          if (x !== undefined || y !== undefined) {
            throw new ToolError(
              "Give either selector, or x and y, not both",
            );
          }
          const element = await findElement(
            page,
            selector,
            ctx.config.selector_timeout_ms,
          );
          clicked = await element.evaluate(describeElement)
            .catch(() => "the element");
          ({ navigated } = await withNavigation(
            page,
            ctx.config.action_timeout_ms,
            () =>
              bounded(
                element.click().catch((error: unknown) => {
                  throw new ToolError(
                    `Cannot click ${clicked} matching selector "${selector}": ${
                      reasonOf(error)
                    } (is it hidden, disabled or covered?)`,
                  );
                }),
                ctx.config.action_timeout_ms,
              ),
          ));
        } else if (x !== undefined && y !== undefined) {
          clicked = `point (${x}, ${y})`;
          ({ navigated } = await withNavigation(
            page,
            ctx.config.action_timeout_ms,
            () => bounded(page.mouse.click(x, y), ctx.config.action_timeout_ms),
          ));
        } else {
          throw new ToolError(
            "click_element needs a selector, or both x and y (viewport pixels, as in screenshot)",
          );
        }
        const state = await pageState(page);
        return json({ clicked, navigated, url: state.url, title: state.title });
      },
    );
  },
});

export const typeText = tool({
  name: "type_text",
  title: "Type text",
  touches: [],
  description:
    'Focus an element and type text into it key by key, after what it already holds (fill_form replaces values instead). A "\\n" presses Enter.',
  input: z.object({
    selector: selectorParam,
    text: z.string().max(100_000).describe("Text to type"),
  }),
  output: z.object({
    typed_chars: z.number().int(),
    selector: z.string(),
    value: z.string().nullable(),
    navigated: z.boolean(),
  }),
  annotations: { destructiveHint: true },
  handle(ctx, { selector, text }, call) {
    return ctx.act(
      call,
      { tool: "type_text", log: { selector, chars: text.length } },
      async (page) => {
        const element = await findElement(
          page,
          selector,
          ctx.config.selector_timeout_ms,
        );
        // Type after the current content, not wherever focus put the caret.
        await element.evaluate(focusAtEnd);
        const { navigated } = await withNavigation(
          page,
          ctx.config.action_timeout_ms,
          () => page.keyboard.type(text),
        );
        const value = navigated
          ? null
          : await element.evaluate(currentValue).catch(() => null);
        return json({
          typed_chars: text.length,
          selector,
          value: value === null ? null : value.slice(0, 2000),
          navigated,
        });
      },
    );
  },
});

function noOption(
  what: string,
  wanted: string,
  options: OptionChoice[] | null,
): ToolError {
  if (options === null) return new ToolError(`${what} is not a <select>`);
  const listed = options.slice(0, 30).map((option) =>
    option.label && option.label !== option.value
      ? `${option.value} (${option.label})`
      : option.value
  );
  return new ToolError(
    `${what} has no option with value or label "${wanted}"; options: ${
      listed.join(", ") || "none"
    }`,
  );
}

export const selectOption = tool({
  name: "select_option",
  title: "Select option",
  touches: [],
  description:
    "Choose an option of a <select> dropdown by its value, or else by its visible label.",
  input: z.object({
    selector: selectorParam,
    value: z.string().describe("The option's value, or its visible label"),
  }),
  output: z.object({
    selector: z.string(),
    selected: z.object({ value: z.string(), label: z.string() }),
  }),
  annotations: { destructiveHint: true },
  handle(ctx, { selector, value }, call) {
    return ctx.act(
      call,
      { tool: "select_option", log: { selector } },
      async (page) => {
        const element = await findElement(
          page,
          selector,
          ctx.config.selector_timeout_ms,
        );
        const outcome = await element.evaluate(chooseOption, value);
        if (!("chosen" in outcome)) {
          throw noOption(`Selector "${selector}"`, value, outcome.options);
        }
        return json({ selector, selected: { ...outcome.chosen } });
      },
    );
  },
});

const TRUE_WORDS = new Set(["true", "on", "yes", "1", "checked"]);
/** Inputs whose value cannot be typed; set directly. */
const SET_DIRECTLY = new Set([
  "date",
  "time",
  "datetime-local",
  "month",
  "week",
  "color",
  "range",
]);

/** Fills one field; returns what kind of field it was. */
async function fillField(
  page: Page,
  element: ElementHandle,
  value: string,
): Promise<string> {
  const kind = await element.evaluate(fieldKind);
  if (kind === "select") {
    const outcome = await element.evaluate(chooseOption, value);
    if (!("chosen" in outcome)) throw noOption("It", value, outcome.options);
    return kind;
  }
  if (kind === "checkbox" || kind === "radio") {
    const want = TRUE_WORDS.has(value.trim().toLowerCase());
    const checked = await element.evaluate(isChecked);
    if (checked !== want) {
      if (kind === "radio" && !want) {
        throw new ToolError(
          "A radio button cannot be unchecked; fill the one to choose with true",
        );
      }
      await element.click();
    }
    return kind;
  }
  if (kind === "file") {
    throw new ToolError("File inputs cannot be filled with text");
  }
  if (kind.startsWith("<")) {
    throw new ToolError(
      `It is a ${kind}, not a form field (input, textarea, select or contenteditable)`,
    );
  }
  if (SET_DIRECTLY.has(kind)) {
    await element.evaluate(setValue, value);
    return kind;
  }
  // Clear, then insert the text as one input (like paste): fast, and fires input events.
  await element.evaluate(clearField);
  if (value !== "") await page.keyboard.sendCharacter(value);
  await element.evaluate(fireChange);
  return kind;
}

export const fillForm = tool({
  name: "fill_form",
  title: "Fill form",
  touches: [],
  description:
    "Fill several form fields at once, replacing their values: text inputs and textareas get the text, selects the option with that value or label, checkboxes and radios true/false.",
  input: z.object({
    fields: z.array(z.object({
      selector: selectorParam,
      value: z.string().max(100_000).describe("Value to set"),
    })).min(1).max(200).describe("Fields to fill, in order"),
  }),
  output: z.object({
    filled: z.array(z.object({ selector: z.string(), kind: z.string() })),
    count: z.number().int(),
    url: z.string(),
  }),
  annotations: { destructiveHint: true },
  handle(ctx, { fields }, call) {
    return ctx.act(
      call,
      {
        tool: "fill_form",
        log: { selectors: fields.map((field) => field.selector) },
      },
      async (page) => {
        const filled: { selector: string; kind: string }[] = [];
        for (const [index, field] of fields.entries()) {
          const which = `fields[${index}] (selector "${field.selector}")`;
          try {
            const element = await findElement(
              page,
              field.selector,
              ctx.config.selector_timeout_ms,
            );
            filled.push({
              selector: field.selector,
              kind: await fillField(page, element, field.value),
            });
          } catch (error) {
            const done = filled.length
              ? `; filled before it: ${
                filled.map((f) => f.selector).join(", ")
              }`
              : "";
            throw new ToolError(
              `Cannot fill ${which}: ${
                error instanceof ToolError ? error.message : reasonOf(error)
              }${done}`,
            );
          }
        }
        return json({ filled, count: filled.length, url: page.url() });
      },
    );
  },
});

export const submitForm = tool({
  name: "submit_form",
  title: "Submit form",
  touches: [],
  description:
    "Submit a form as a user would (validation and submit handlers run) and wait for the page it leads to. selector names the form, a field in it or its submit button; without it, the form of the focused field, else the page's first form.",
  input: z.object({
    selector: selectorParam.optional().describe(
      `The form, a field in it, or the submit button to use: ${SELECTOR_HELP}`,
    ),
  }),
  output: z.object({
    submitted: z.literal(true),
    method: z.string(),
    action: z.string(),
    navigated: z.boolean(),
    url: z.string(),
    title: z.string(),
  }),
  annotations: { destructiveHint: true, openWorldHint: true },
  handle(ctx, { selector }, call) {
    return ctx.act(
      call,
      { tool: "submit_form", log: { selector: selector ?? null } },
      async (page) => {
        const element = selector === undefined ? undefined : await findElement(
          page,
          selector,
          ctx.config.selector_timeout_ms,
        );
        const what = selector === undefined
          ? "The page"
          : `Selector "${selector}"`;
        const { value: outcome, navigated } = await withNavigation(
          page,
          ctx.config.action_timeout_ms,
          () =>
            element === undefined
              ? page.evaluate(submitFormOf, null)
              : element.evaluate(submitFormOf),
        );
        if ("error" in outcome) {
          if (outcome.error === "no-form") {
            throw new ToolError(
              selector === undefined
                ? "The page has no form to submit"
                : `${what} matches an element that is not in a form`,
            );
          }
          throw new ToolError(
            `The form did not pass validation: ${
              (outcome.invalid ?? []).join("; ")
            }`,
          );
        }
        const state = await pageState(page);
        return json({
          submitted: true,
          method: outcome.method,
          action: outcome.action,
          navigated,
          url: state.url,
          title: state.title,
        });
      },
    );
  },
});
