// GET /admin: one section per server that offers one (the gateway's
// upstreams, health and tool catalog, ...), as JSON for programs and as one
// self-contained HTML page for people. Sections are data (ServerRuntime's
// `admin()`); this file renders any of them.

import { type Context, Hono } from "hono";
import { encodeBase64 } from "../platform/base64.ts";
import { errorResponse } from "../platform/http_errors.ts";
import type { GuardVariables } from "../platform/http_guards.ts";
import type { Caller } from "../platform/identity.ts";
import type { JsonValue } from "../platform/store/mod.ts";
import type { HostedServer } from "../tools/kit/host.ts";
import { htmlPage } from "./page.ts";
import { ADMIN_SCRIPT } from "./scripts.ts";
import type {
  AdminColumn,
  AdminFormat,
  AdminSection,
  AdminTable,
} from "../tools/kit/admin.ts";

/** A section with the id of the server that gave it. */
export type PageSection = AdminSection & { server: string };

/** What `/admin` answers: the JSON body, and the HTML page's data. */
export type AdminPage = {
  generated_at: string;
  version: string;
  sections: PageSection[];
};

type AdminRow = AdminTable["rows"][number];

/** The sections of every running server that offers one, in host order, as `viewer` may see them. */
export async function adminPage(
  hosts: readonly HostedServer[],
  options: { version: string; now?: number; viewer?: Caller },
): Promise<AdminPage> {
  const viewer = options.viewer ?? {};
  const sections = await Promise.all(hosts.map(async (host) => {
    const section = await host.admin(viewer);
    return section === undefined ? undefined : { server: host.id, ...section };
  }));
  const shown = sections.filter((section) => section !== undefined);
  const tasks = await tasksSection(hosts, viewer);
  if (tasks) shown.push(tasks);
  return {
    generated_at: new Date(options.now ?? Date.now()).toISOString(),
    version: options.version,
    sections: shown,
  };
}

/** The daemon's MCP tasks as `viewer` may see them (the newest 50), when there are any. */
async function tasksSection(
  hosts: readonly HostedServer[],
  viewer: Caller,
): Promise<PageSection | undefined> {
  const board = hosts.find((host) => host.tasks)?.tasks;
  const rows = await board?.rows(viewer, 50) ?? [];
  if (rows.length === 0) return undefined;
  return {
    server: "tasks",
    title: "Tasks",
    fields: [{
      key: "running",
      label: "Running here",
      value: board?.runningCount ?? 0,
      format: "number",
    }],
    tables: [{
      id: "tasks",
      title: "MCP tasks (newest first)",
      row_attribute: "task",
      row_key: "id",
      columns: [
        { key: "server", label: "Server", format: "code" },
        { key: "tool", label: "Tool", format: "code" },
        { key: "status", label: "Status", format: "state" },
        { key: "message", label: "Message" },
        { key: "caller", label: "Caller", format: "code" },
        { key: "created", label: "Created", format: "time" },
        { key: "updated", label: "Updated", format: "time" },
        { key: "id", label: "Task", format: "code" },
      ],
      rows,
      empty: "No tasks",
    }],
  };
}

export interface AdminOptions {
  /** How often the page re-renders itself; 0 turns the refresh off. */
  refreshMs?: number;
}

type AdminEnv = { Variables: GuardVariables };

export function adminRoutes(
  page: (viewer: Caller) => Promise<AdminPage>,
  options: AdminOptions = {},
): Hono<AdminEnv> {
  const refreshMs = options.refreshMs ?? 5_000;
  const app = new Hono<AdminEnv>();
  app.get("/", async (c) => {
    // Unset when the app runs without the caller guard (tests): the operator's view.
    const caller: Caller | undefined = c.get("caller");
    const data = await page(caller ?? {});
    if (data.sections.length === 0) {
      return errorResponse(
        404,
        "Nothing at /admin: no running server here has an admin section (the gateway has one)",
      );
    }
    const format = formatOf(c);
    if (format === "json") {
      return c.json(data, 200, { ...COMMON_HEADERS, vary: "Accept" });
    }
    const nonce = encodeBase64(crypto.getRandomValues(new Uint8Array(16)));
    const body = format === "fragment"
      ? renderMain(data)
      : renderPage(data, { nonce, refreshMs });
    return c.html(body, 200, {
      ...COMMON_HEADERS,
      "content-security-policy":
        `default-src 'none'; style-src 'nonce-${nonce}'; ` +
        `script-src 'nonce-${nonce}'; connect-src 'self'; frame-ancestors 'none'`,
      "referrer-policy": "no-referrer",
      vary: "Accept",
    });
  });
  app.all(
    "/",
    (c) =>
      errorResponse(405, `${c.req.method} is not allowed on /admin; use GET`, {
        headers: { allow: "GET, HEAD" },
      }),
  );
  return app;
}

const COMMON_HEADERS = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
};

/**
 * `?format=json|html|fragment` decides (a fragment is the page's `<main>`
 * alone, for its refresh); otherwise JSON when Accept names it before text/html.
 */
function formatOf(c: Context<AdminEnv>): "json" | "html" | "fragment" {
  const format = c.req.query("format");
  if (format === "json" || format === "html" || format === "fragment") {
    return format;
  }
  const accept = (c.req.header("accept") ?? "").toLowerCase();
  const json = accept.indexOf("application/json");
  const html = accept.indexOf("text/html");
  return json !== -1 && (html === -1 || json < html) ? "json" : "html";
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => ESCAPES[char] ?? char);
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

const DASH = "—";

/**
 * A `<time>` reading `03:04:05` on the view's own day (`day`, `YYYY-MM-DD`),
 * else `2026-01-02 03:04`; the full ISO time is its tooltip.
 */
function time(iso: string | null, day: string): string {
  if (iso === null) return DASH;
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return escapeHtml(iso);
  const utc = date.toISOString();
  const shown = utc.startsWith(day)
    ? utc.slice(11, 19)
    : `${utc.slice(0, 10)} ${utc.slice(11, 16)}`;
  return `<time datetime="${utc}" title="${utc}">${shown}</time>`;
}

/** The UTC day of an ISO time, `YYYY-MM-DD` (empty when unparsable). */
function dayOf(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? "" : date.toISOString().slice(0, 10);
}

function count(value: number | null, unit = ""): string {
  return value === null ? DASH : `${value.toLocaleString("en-US")}${unit}`;
}

function percent(rate: number): string {
  return `${(rate * 100).toFixed(rate === 0 ? 0 : 1)}%`;
}

/** One value as a table cell, by its column's format. */
function cell(
  value: JsonValue | undefined,
  column: AdminColumn,
  day: string,
): string {
  const format = column.format ?? "text";
  const shown = value ?? null;
  switch (format) {
    case "code":
      return `<td class="code">${scalar(shown, format, day)}</td>`;
    case "number":
    case "duration":
    case "percent":
    case "id":
      return `<td class="num">${scalar(shown, format, day)}</td>`;
    case "state":
    case "error":
      return `<td class="${format}">${
        shown === null ? "" : scalar(shown, "text", day)
      }</td>`;
    case "flag":
      return `<td class="flag">${
        shown === true
          ? `<span class="flag ${classOf(column.key)}">${
            escapeHtml(column.label.toLowerCase())
          }</span>`
          : ""
      }</td>`;
    default:
      return `<td>${scalar(shown, format, day)}</td>`;
  }
}

/** A value as escaped HTML text (no cell around it). */
function scalar(value: JsonValue, format: AdminFormat, day: string): string {
  if (value === null) return format === "error" ? "" : DASH;
  if (typeof value === "number") {
    switch (format) {
      case "number":
        return count(value);
      case "duration":
        return value < 1000 ? count(value, " ms") : count(value / 1000, " s");
      case "percent":
        return percent(value);
      case "id":
        return String(value);
    }
  }
  if (typeof value === "string") {
    if (format === "time") return time(value, day);
    if (format === "words") return escapeHtml(value.replaceAll("_", " "));
    if (format === "code") return `<code>${escapeHtml(value)}</code>`;
    return escapeHtml(value);
  }
  return escapeHtml(
    typeof value === "object" ? JSON.stringify(value) : String(value),
  );
}

/** A key as a CSS class: letters, digits, `-` and `_` only. */
function classOf(key: string): string {
  return key.replace(/[^A-Za-z0-9_-]/g, "-");
}

function row(table: AdminTable, values: AdminRow, day: string): string {
  const cells = table.columns.map((column) =>
    cell(values[column.key], column, day)
  )
    .join("");
  const state = table.columns.find((column) => column.format === "state");
  const marks = [
    [table.row_attribute, values[table.row_key]],
    ...(state ? [["state", values[state.key]]] : []),
  ].map(([name, value]) =>
    ` data-${classOf(String(name))}="${escapeHtml(String(value ?? ""))}"`
  ).join("");
  return `<tr${marks}>${cells}</tr>`;
}

function renderTable(table: AdminTable, day: string): string {
  const head = table.columns.map((column) =>
    `<th scope="col">${escapeHtml(column.label)}</th>`
  ).join("");
  const body = table.rows.length > 0
    ? table.rows.map((values) => row(table, values, day)).join("\n")
    : `<tr class="empty"><td colspan="${table.columns.length}">${
      escapeHtml(table.empty)
    }</td></tr>`;
  return `<h3>${escapeHtml(table.title)}</h3>
<div class="scroll"><table id="${
    escapeHtml(table.id)
  }"><thead><tr>${head}</tr></thead>\n<tbody>\n${body}\n</tbody></table></div>`;
}

function renderSection(section: PageSection, day: string): string {
  const fields = section.fields.map((field) =>
    `<div><dt>${escapeHtml(field.label)}</dt><dd>${
      scalar(field.value, field.format ?? "text", day)
    }</dd></div>`
  ).join("");
  return `<section data-section="${escapeHtml(section.server)}">
<h2>${escapeHtml(section.title)}</h2>${
    fields ? `<dl class="fields">${fields}</dl>` : ""
  }
${section.tables.map((table) => renderTable(table, day)).join("\n")}
</section>`;
}

/** The part the refresh script swaps: everything that depends on the page's data. */
function renderMain(page: AdminPage): string {
  const day = dayOf(page.generated_at);
  const summary = [
    ["Version", escapeHtml(page.version)],
    ["Generated", `${escapeHtml(day)} ${time(page.generated_at, day)} UTC`],
  ].map(([term, value]) => `<div><dt>${term}</dt><dd>${value}</dd></div>`);
  return `<main id="admin">
<header><h1>agentd</h1><dl id="summary">${summary.join("")}</dl></header>
${page.sections.map((section) => renderSection(section, day)).join("\n")}
</main>`;
}

const STYLE = `
:root { color-scheme: light dark; --muted: #6b7280; --line: #d1d5db55; }
body { font: 13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1rem 1.25rem; }
h1 { font-size: 1.3rem; margin: 0 0 .5rem; }
h2 { font-size: 1.1rem; margin: 1.5rem 0 .4rem; }
h3 { font-size: 1rem; margin: 1.2rem 0 .4rem; }
dl { display: flex; flex-wrap: wrap; gap: .4rem 1.5rem; margin: 0; }
dt { color: var(--muted); font-size: .8rem; }
dd { margin: 0; font-weight: 600; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: 12px; }
th, td { padding: .25rem .4rem; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { font-weight: 600; color: var(--muted); }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td time { white-space: nowrap; }
code { font: 11.5px ui-monospace, "SFMono-Regular", Menlo, monospace; overflow-wrap: anywhere; }
td.code { min-width: 7rem; max-width: 16rem; }
td.state { font-weight: 600; }
tr[data-state="healthy"] td.state { color: #15803d; }
tr[data-state="unhealthy"] td.state { color: #dc2626; }
tr[data-state="connecting"] td.state { color: #b45309; }
tr[data-state="stopped"] td.state { color: var(--muted); }
td.error { color: #dc2626; min-width: 9rem; max-width: 28rem; overflow-wrap: anywhere; }
span.flag { font-size: .75rem; padding: 0 .3rem; border: 1px solid currentColor; border-radius: .3rem; color: #b45309; }
tr.empty td { color: var(--muted); font-style: italic; }
#refresh { color: var(--muted); font-size: .8rem; }
#refresh.stale { color: #dc2626; }
`;

function renderPage(
  page: AdminPage,
  options: { nonce: string; refreshMs: number },
): string {
  const { nonce, refreshMs } = options;
  const refresh = refreshMs > 0
    ? `<p id="refresh" data-refresh-ms="${refreshMs}">Refreshes every ${
      refreshMs / 1000
    } s</p>
<script nonce="${nonce}">${ADMIN_SCRIPT}</script>`
    : "";
  return htmlPage({
    title: "agentd admin",
    nonce,
    style: STYLE,
    body: `${renderMain(page)}\n${refresh}`,
  });
}
