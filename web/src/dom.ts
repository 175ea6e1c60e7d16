// What every panel of the dashboard uses: DOM nodes built from data (never
// HTML from data), tables, the daemon's JSON API read with the session
// cookie (same origin), and server-sent events.

/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/// <reference lib="dom.asynciterable" />

/** An element of the page by id, of the kind the script needs. */
export function byId<T extends HTMLElement>(
  id: string,
  kind: { new (): T; prototype: T },
): T {
  const node = document.getElementById(id);
  if (!(node instanceof kind)) {
    throw new Error(`The page has no ${kind.name} #${id}`);
  }
  return node;
}

export type Child = Node | string | number | null | undefined;

export function el(
  tag: string,
  props: Record<string, unknown> = {},
  ...children: Child[]
): HTMLElement {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null) continue;
    if (key === "text") node.textContent = String(value);
    else if (key === "class") node.className = String(value);
    else node.setAttribute(key, String(value));
  }
  for (const child of children) {
    if (child === undefined || child === null) continue;
    node.append(
      child instanceof Node ? child : document.createTextNode(String(child)),
    );
  }
  return node;
}

export function shown(value: unknown): string {
  if (value === undefined || value === null) return "—";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** A column of `table`: a row's `key`, or what `value` makes of the row. */
export interface Column<R> {
  label: string;
  key?: keyof R & string;
  value?: (row: R) => unknown;
  cls?: (row: R) => string | undefined;
}

export function table<R extends object>(
  columns: Column<R>[],
  rows: R[],
  empty: string,
  rowKey?: keyof R & string,
): HTMLElement {
  if (rows.length === 0) return el("p", { class: "empty", text: empty });
  const head = el(
    "tr",
    {},
    ...columns.map((c) => el("th", { scope: "col", text: c.label })),
  );
  const body = rows.map((row) =>
    el(
      "tr",
      rowKey ? { "data-key": shown(row[rowKey]) } : {},
      ...columns.map((c) => {
        const value = c.value ? c.value(row) : c.key ? row[c.key] : undefined;
        const cls = c.cls ? c.cls(row) : undefined;
        return el(
          "td",
          { class: cls },
          value instanceof Node ? value : shown(value),
        );
      }),
    )
  );
  return el(
    "div",
    { class: "scroll" },
    el("table", {}, el("thead", {}, head), el("tbody", {}, ...body)),
  );
}

/** Replaces the body of panel `id`. */
export function fill(id: string, ...nodes: Node[]): void {
  const body = document.querySelector("#" + id + " > .body");
  if (!body) throw new Error(`The page has no panel #${id}`);
  body.replaceChildren(...nodes);
}

/** An error's message, whatever was thrown. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The daemon answered with an error status. */
export class HttpFailure extends Error {
  constructor(message: string, readonly status: number) {
    super(message);
  }
}

export function statusOf(error: unknown): number | undefined {
  return error instanceof HttpFailure ? error.status : undefined;
}

export async function errorText(response: Response): Promise<string> {
  try {
    const body = await response.json();
    return body && body.error ? body.error.message : "";
  } catch {
    return "";
  }
}

export async function getJson<T>(path: string): Promise<T> {
  const response = await fetch(path, {
    headers: { accept: "application/json" },
    cache: "no-store",
  });
  if (!response.ok) {
    throw new HttpFailure(
      path + ": HTTP " + response.status + " " + (await errorText(response)),
      response.status,
    );
  }
  return await response.json();
}

export function time(iso: string | null | undefined): string {
  if (!iso) return "—";
  const date = new Date(iso);
  return Number.isNaN(date.getTime())
    ? iso
    : date.toISOString().replace("T", " ").slice(0, 19);
}

export function clip(text: unknown, max: number): string {
  const value = shown(text);
  return value.length > max ? value.slice(0, max) + "…" : value;
}

/** What /health says of one server. */
export type ServerView = {
  phase: string;
  since?: string;
  calls?: number;
  errors?: number;
  error?: string;
  degraded?: boolean;
  details?: {
    status?: string;
    summary?: string;
    error?: unknown;
    entries_per_namespace?: Record<string, number>;
    [key: string]: unknown;
  };
  [key: string]: unknown;
};

export type Health = {
  status: string;
  uptime_s: number;
  servers: Record<string, ServerView>;
};

/** /health answers 503 with the same body when every server is down. */
export async function getHealth(): Promise<Health> {
  const response = await fetch("/health", {
    headers: { accept: "application/json" },
    cache: "no-store",
  });
  if (!response.ok && response.status !== 503) {
    throw new Error(
      "/health: HTTP " + response.status + " " + (await errorText(response)),
    );
  }
  return await response.json();
}

/** The events of a text/event-stream body, each `data` parsed as JSON. */
export async function* sseEvents<T>(
  response: Response,
): AsyncGenerator<{ event: string; data: T }> {
  if (!response.body) throw new Error("The answer has no body");
  const reader = response.body.pipeThrough(new TextDecoderStream())
    .getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replaceAll("\r\n", "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) !== -1) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let event = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) {
          data.push(line.slice(5).replace(/^ /, ""));
        }
      }
      if (data.length > 0) yield { event, data: JSON.parse(data.join("\n")) };
    }
  }
}
