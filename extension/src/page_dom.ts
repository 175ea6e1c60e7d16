// The DOM and storage actions the content script runs in the page
// (isolated world): serialising, reading text, waiting, filling, storage.

/// <reference lib="dom" />
import type { Json } from "./json.ts";

export type Args = Record<string, unknown>;

const STYLE_PROPERTIES = [
  "display",
  "visibility",
  "position",
  "width",
  "height",
  "color",
  "background-color",
  "font-size",
  "font-weight",
  "opacity",
];

function stringArg(args: Args, name: string): string | undefined {
  const value = args[name];
  return typeof value === "string" ? value : undefined;
}

function numberArg(args: Args, name: string, fallback: number): number {
  const value = args[name];
  return typeof value === "number" && Number.isFinite(value) ? value : fallback;
}

function query(selector: string): Element | null {
  try {
    return document.querySelector(selector);
  } catch {
    throw new Error(`"${selector}" is not a valid CSS selector`);
  }
}

function required(selector: string): Element {
  const element = query(selector);
  if (!element) {
    throw new Error(`No element matches "${selector}" on ${location.href}`);
  }
  return element;
}

/** `main > div#app > button.primary:nth-of-type(2)`, short enough to read. */
export function pathOf(node: Node): string {
  const parts: string[] = [];
  let current: Node | null = node;
  while (current && parts.length < 4) {
    if (current instanceof Element) {
      let part = current.tagName.toLowerCase();
      if (current.id) part += `#${current.id}`;
      else if (current.classList.length) part += `.${current.classList[0]}`;
      parts.unshift(part);
    } else if (current.nodeType === Node.TEXT_NODE) {
      parts.unshift("#text");
    }
    current = current.parentNode;
  }
  return parts.join(" > ");
}

function escapeText(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(
    ">",
    "&gt;",
  );
}

function escapeAttribute(text: string): string {
  return escapeText(text).replaceAll('"', "&quot;");
}

/** HTML of the element; with styles, each element carries its computed key styles. */
export function getDom(args: Args): Json {
  const selector = stringArg(args, "selector");
  const includeStyles = args.include_styles === true;
  const maxChars = numberArg(args, "max_chars", 20_000);
  const root = selector === undefined
    ? document.documentElement
    : required(selector);
  const out: string[] = [];
  let size = 0;
  let truncated = false;
  let elements = 0;
  const push = (chunk: string) => {
    if (truncated) return;
    if (size + chunk.length > maxChars) {
      out.push(chunk.slice(0, maxChars - size));
      size = maxChars;
      truncated = true;
      return;
    }
    out.push(chunk);
    size += chunk.length;
  };
  const walk = (node: Node) => {
    if (truncated) return;
    if (node instanceof Element) {
      elements++;
      const tag = node.tagName.toLowerCase();
      let open = `<${tag}`;
      for (const attribute of node.attributes) {
        open += ` ${attribute.name}="${escapeAttribute(attribute.value)}"`;
      }
      if (includeStyles) {
        const computed = getComputedStyle(node);
        const styles = STYLE_PROPERTIES.map((name) =>
          `${name}: ${computed.getPropertyValue(name)}`
        ).join("; ");
        open += ` data-computed-style="${escapeAttribute(styles)}"`;
      }
      push(open + ">");
      if (tag === "script" || tag === "style") {
        push(escapeText((node.textContent ?? "").slice(0, 200)));
      } else {
        for (const child of node.childNodes) walk(child);
      }
      push(`</${tag}>`);
    } else if (node.nodeType === Node.TEXT_NODE) {
      const text = node.textContent ?? "";
      if (text.trim() !== "") push(escapeText(text));
    }
  };
  walk(root);
  return {
    url: location.href,
    selector: selector ?? null,
    include_styles: includeStyles,
    elements,
    html: out.join(""),
    truncated,
  };
}

export function textContent(args: Args): Json {
  const selector = stringArg(args, "selector") ?? "body";
  const maxChars = numberArg(args, "max_chars", 20_000);
  const element = required(selector);
  const text = (element.textContent ?? "").replace(/\s+/g, " ").trim();
  return {
    url: location.href,
    selector,
    matches: document.querySelectorAll(selector).length,
    text: text.slice(0, maxChars),
    length: text.length,
    truncated: text.length > maxChars,
  };
}

function describeElement(element: Element): Json {
  const box = element.getBoundingClientRect();
  return {
    tag: element.tagName.toLowerCase(),
    id: element.id || null,
    text: (element.textContent ?? "").replace(/\s+/g, " ").trim().slice(0, 200),
    visible: box.width > 0 && box.height > 0,
  };
}

export function waitForElement(args: Args): Promise<Json> {
  const selector = stringArg(args, "selector") ?? "";
  const timeout = numberArg(args, "timeout_ms", 5_000);
  const started = performance.now();
  const found = (element: Element): Json => ({
    url: location.href,
    selector,
    found: true,
    waited_ms: Math.round(performance.now() - started),
    element: describeElement(element),
  });
  const now = query(selector);
  if (now) return Promise.resolve(found(now));
  return new Promise((resolve, reject) => {
    const observer = new MutationObserver(() => {
      const element = query(selector);
      if (!element) return;
      observer.disconnect();
      clearTimeout(timer);
      resolve(found(element));
    });
    observer.observe(document, {
      subtree: true,
      childList: true,
      attributes: true,
    });
    const timer = setTimeout(() => {
      observer.disconnect();
      reject(
        new Error(
          `No element matched "${selector}" within ${timeout} ms on ${location.href}`,
        ),
      );
    }, timeout);
  });
}

/** Sets a field as a user would: the native value setter (so frameworks see it), then input and change. */
export function fill(args: Args): Json {
  const selector = stringArg(args, "selector") ?? "";
  const value = stringArg(args, "value") ?? "";
  const element = required(selector);
  if (element instanceof HTMLSelectElement) {
    const option = [...element.options].find((candidate) =>
      candidate.value === value || candidate.text.trim() === value
    );
    if (!option) {
      throw new Error(
        `"${selector}" has no option with value or text "${value}" (options: ${
          [...element.options].map((candidate) => candidate.value).join(", ")
        })`,
      );
    }
    element.value = option.value;
  } else if (
    element instanceof HTMLInputElement &&
    (element.type === "checkbox" || element.type === "radio")
  ) {
    element.checked = !["false", "0", "off", ""].includes(value.toLowerCase());
  } else if (
    element instanceof HTMLInputElement ||
    element instanceof HTMLTextAreaElement
  ) {
    const prototype = element instanceof HTMLInputElement
      ? HTMLInputElement.prototype
      : HTMLTextAreaElement.prototype;
    const setter = Object.getOwnPropertyDescriptor(prototype, "value")?.set;
    element.focus();
    if (setter) setter.call(element, value);
    else element.value = value;
  } else if (element instanceof HTMLElement && element.isContentEditable) {
    element.focus();
    element.textContent = value;
  } else {
    throw new Error(
      `"${selector}" is a <${element.tagName.toLowerCase()}>, not a field (input, textarea, select or contenteditable)`,
    );
  }
  element.dispatchEvent(new Event("input", { bubbles: true }));
  element.dispatchEvent(new Event("change", { bubbles: true }));
  const now = element instanceof HTMLInputElement &&
      (element.type === "checkbox" || element.type === "radio")
    ? String(element.checked)
    : "value" in element && typeof element.value === "string"
    ? element.value
    : element.textContent ?? "";
  return { url: location.href, selector, value: now };
}

export function storage(args: Args): Json {
  const area = args.area === "session" ? sessionStorage : localStorage;
  const key = stringArg(args, "key");
  const maxChars = numberArg(args, "max_chars", 20_000);
  if (key !== undefined) {
    const value = area.getItem(key);
    return {
      url: location.href,
      origin: location.origin,
      key,
      found: value !== null,
      value,
    };
  }
  const entries: Record<string, Json> = {};
  let size = 0;
  let listed = 0;
  for (let i = 0; i < area.length; i++) {
    const name = area.key(i);
    if (name === null) continue;
    const value = area.getItem(name) ?? "";
    size += name.length + value.length;
    if (size > maxChars) break;
    entries[name] = value;
    listed++;
  }
  return {
    url: location.href,
    origin: location.origin,
    count: listed,
    total: area.length,
    entries,
    truncated: listed < area.length,
  };
}
