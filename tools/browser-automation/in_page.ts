// Functions that run inside the page: puppeteer sends their source, so they
// may use only their arguments and the page's globals. Deno's types have no
// DOM, and the DOM lib would clash with Deno's own, so the page globals these
// functions use are declared here, by the parts they use, for this file only.

interface PageEventTarget {
  dispatchEvent(event: PageEvent): boolean;
}
interface PageEvent {
  readonly type: string;
}
declare const Event: new (
  type: string,
  init?: { bubbles?: boolean },
) => PageEvent;

interface PageNode extends PageEventTarget {
  textContent: string | null;
}
interface PageElement extends PageNode {
  readonly tagName: string;
  readonly id: string;
  readonly outerHTML: string;
  getAttribute(name: string): string | null;
  closest(selector: string): PageElement | null;
  getBoundingClientRect(): { width: number; height: number };
  checkVisibility(
    options?: { opacityProperty?: boolean; visibilityProperty?: boolean },
  ): boolean;
}
interface PageHTMLElement extends PageElement {
  readonly innerText: string;
  readonly isContentEditable: boolean;
  focus(): void;
}
interface PageValidity {
  readonly valid: boolean;
}
interface PageField extends PageHTMLElement {
  value: string;
  readonly form: PageForm | null;
  readonly validity: PageValidity;
  readonly validationMessage: string;
  readonly name: string;
  setSelectionRange(start: number, end: number): void;
}
interface PageInput extends PageField {
  readonly type: string;
  checked: boolean;
}
interface PageOption {
  readonly value: string;
  readonly label: string;
  selected: boolean;
}
interface PageSelect extends PageField {
  readonly options: ArrayLike<PageOption>;
}
interface PageForm extends PageHTMLElement {
  readonly elements: ArrayLike<PageElement>;
  readonly method: string;
  readonly action: string;
  requestSubmit(submitter?: PageHTMLElement): void;
}
interface PageAnchor extends PageHTMLElement {
  readonly href: string;
}

declare const HTMLElement: new () => PageHTMLElement;
declare const HTMLInputElement: new () => PageInput;
declare const HTMLTextAreaElement: new () => PageField;
declare const HTMLSelectElement: new () => PageSelect;
declare const HTMLButtonElement: new () => PageField;
declare const HTMLFormElement: new () => PageForm;
declare const HTMLAnchorElement: new () => PageAnchor;
declare const document: {
  readonly activeElement: PageElement | null;
  readonly forms: ArrayLike<PageForm>;
  readonly scrollingElement: { readonly scrollHeight: number } | null;
  readonly documentElement: { readonly scrollHeight: number };
};
declare const scrollY: number;
declare const innerHeight: number;
declare function scrollBy(options: { top: number; behavior: string }): void;

/** `<button#save> "Save"`: what an element is, for results. */
export function describeElement(node: PageElement): string {
  const id = node.id ? `#${node.id}` : "";
  const label = (node.textContent ?? "").replace(/\s+/g, " ").trim()
    .slice(0, 60);
  return `<${node.tagName.toLowerCase()}${id}>${label ? ` "${label}"` : ""}`;
}

/** Focuses the element with the caret after its content, for typing. */
export function focusAtEnd(node: PageElement): void {
  if (!(node instanceof HTMLElement)) return;
  node.focus();
  if (node instanceof HTMLInputElement || node instanceof HTMLTextAreaElement) {
    try {
      node.setSelectionRange(node.value.length, node.value.length);
    } catch {
      // input types without a selection (email, number)
    }
  }
}

/** A field's value, or an element's text. */
export function currentValue(node: PageElement): string | null {
  if (
    node instanceof HTMLInputElement || node instanceof HTMLTextAreaElement ||
    node instanceof HTMLSelectElement
  ) {
    return node.value;
  }
  return node.textContent;
}

export interface OptionChoice {
  value: string;
  label: string;
}

export type OptionOutcome =
  | { chosen: OptionChoice }
  | { options: OptionChoice[] | null };

/** Selects the option whose value, else whose label, is `wanted`; fires input and change. */
export function chooseOption(node: PageElement, wanted: string): OptionOutcome {
  if (!(node instanceof HTMLSelectElement)) return { options: null };
  const options = Array.from(node.options);
  const match = options.find((option) => option.value === wanted) ??
    options.find((option) => option.label.trim() === wanted.trim());
  if (!match) {
    return {
      options: options.map((option) => ({
        value: option.value,
        label: option.label,
      })),
    };
  }
  for (const option of options) option.selected = option === match;
  node.dispatchEvent(new Event("input", { bubbles: true }));
  node.dispatchEvent(new Event("change", { bubbles: true }));
  return { chosen: { value: match.value, label: match.label } };
}

/** `select`, `textarea`, an input's type, `contenteditable`, or `<tag>` for anything else. */
export function fieldKind(node: PageElement): string {
  if (node instanceof HTMLSelectElement) return "select";
  if (node instanceof HTMLTextAreaElement) return "textarea";
  if (node instanceof HTMLInputElement) return node.type || "text";
  if (node instanceof HTMLElement && node.isContentEditable) {
    return "contenteditable";
  }
  return `<${node.tagName.toLowerCase()}>`;
}

export function isChecked(node: PageElement): boolean {
  return node instanceof HTMLInputElement && node.checked;
}

/** Sets a value that cannot be typed (date, color, range) and fires input and change. */
export function setValue(node: PageElement, value: string): void {
  if (node instanceof HTMLInputElement) node.value = value;
  node.dispatchEvent(new Event("input", { bubbles: true }));
  node.dispatchEvent(new Event("change", { bubbles: true }));
}

/** Empties a field (or an editable element) and focuses it, for inserting new text. */
export function clearField(node: PageElement): void {
  if (!(node instanceof HTMLElement)) return;
  node.focus();
  if (node instanceof HTMLInputElement || node instanceof HTMLTextAreaElement) {
    node.value = "";
  } else {
    node.textContent = "";
  }
  node.dispatchEvent(new Event("input", { bubbles: true }));
}

export function fireChange(node: PageElement): void {
  node.dispatchEvent(new Event("change", { bubbles: true }));
}

export type SubmitOutcome =
  | { error: "no-form" }
  | { error: "invalid"; invalid: string[] }
  | { method: string; action: string };

/**
 * Submits the form of `target` (the form, a field or a submit button), or
 * without a target the focused field's form, else the first form.
 */
export function submitFormOf(target: PageElement | null): SubmitOutcome {
  const active = document.activeElement;
  let form: PageForm | null = null;
  if (target === null) {
    form = (active instanceof HTMLInputElement ||
        active instanceof HTMLTextAreaElement ||
        active instanceof HTMLSelectElement ||
        active instanceof HTMLButtonElement) && active.form
      ? active.form
      : document.forms[0] ?? null;
  } else if (target instanceof HTMLFormElement) {
    form = target;
  } else {
    const closest = target.closest("form");
    form = closest instanceof HTMLFormElement ? closest : null;
  }
  if (form === null) return { error: "no-form" };
  const invalid: string[] = [];
  for (const field of Array.from(form.elements)) {
    if (
      (field instanceof HTMLInputElement ||
        field instanceof HTMLTextAreaElement ||
        field instanceof HTMLSelectElement) && !field.validity.valid
    ) {
      invalid.push(
        `${field.name || field.id || "field"}: ${field.validationMessage}`,
      );
    }
  }
  if (invalid.length) return { error: "invalid", invalid };
  const submitter = (target instanceof HTMLButtonElement ||
      target instanceof HTMLInputElement &&
        (target.type === "submit" || target.type === "image")) &&
      target.form === form
    ? target
    : undefined;
  form.requestSubmit(submitter);
  return { method: form.method, action: form.action };
}

export interface ScrollOutcome {
  previous: number;
  now: number;
  step: number;
  max: number;
}

export function scrollPage(
  down: boolean,
  pixels: number | null,
): ScrollOutcome {
  const previous = scrollY;
  const step = pixels ?? innerHeight;
  scrollBy({ top: down ? step : -step, behavior: "instant" });
  const root = document.scrollingElement ?? document.documentElement;
  return {
    previous,
    now: scrollY,
    step,
    max: Math.max(0, root.scrollHeight - innerHeight),
  };
}

/** Rendered text (line breaks as shown) of an element. */
export function textOf(node: PageElement): string {
  return node instanceof HTMLElement ? node.innerText : node.textContent ?? "";
}

export function outerHtmlOf(node: PageElement): string {
  return node.outerHTML;
}

export interface PageLink {
  text: string;
  href: string;
  visible: boolean;
}

/** Text, absolute URL and visibility of each anchor. */
export function describeLinks(anchors: PageElement[]): PageLink[] {
  return anchors.map((anchor) => {
    const rect = anchor.getBoundingClientRect();
    const visible = rect.width > 0 && rect.height > 0 &&
      anchor.checkVisibility({
        opacityProperty: true,
        visibilityProperty: true,
      });
    const label = anchor instanceof HTMLElement
      ? anchor.innerText || anchor.textContent || ""
      : anchor.textContent ?? "";
    return {
      text: (label.trim() || anchor.getAttribute("aria-label") ||
        anchor.getAttribute("title") || "").replace(/\s+/g, " ").slice(0, 200),
      href: anchor instanceof HTMLAnchorElement
        ? anchor.href
        : anchor.getAttribute("href") ?? "",
      visible,
    };
  });
}
