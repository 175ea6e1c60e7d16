// GET /admin: the gateway's upstreams, their health and the tool catalog, as
// JSON for programs and as one self-contained HTML page for people.

import { type Context, Hono } from "hono";
import { encodeBase64 } from "../platform/base64.ts";
import { errorResponse } from "../platform/http_errors.ts";
import type { GuardVariables } from "../platform/http_guards.ts";
import type {
  AdminServer,
  AdminTool,
  AdminView,
} from "../tools/gateway/admin_view.ts";

export interface AdminOptions {
  /** How often the page re-renders itself; 0 turns the refresh off. */
  refreshMs?: number;
}

type AdminEnv = { Variables: GuardVariables };

export function adminRoutes(
  view: () => Promise<AdminView>,
  options: AdminOptions = {},
): Hono<AdminEnv> {
  const refreshMs = options.refreshMs ?? 5_000;
  const app = new Hono<AdminEnv>();
  app.get("/", async (c) => {
    const data = await view();
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

type Cell = (server: AdminServer, day: string) => string;

/** The servers table: each heading beside its cell, so they cannot drift apart. */
const SERVER_COLUMNS: [string, Cell][] = [
  ["Server", (s) => `<td class="name">${escapeHtml(s.name)}</td>`],
  ["Group", (s) => `<td>${escapeHtml(s.group)}</td>`],
  ["Source", (s) => `<td>${escapeHtml(s.source)}</td>`],
  ["Transport", (s) => `<td>${escapeHtml(s.transport)}</td>`],
  [
    "Target",
    (s) => `<td class="target"><code>${escapeHtml(s.target)}</code></td>`,
  ],
  ["State", (s) => `<td class="state">${escapeHtml(s.state)}</td>`],
  ["Since", (s, day) => `<td>${time(s.since, day)}</td>`],
  ["Last check", (s, day) => `<td>${time(s.last_check, day)}</td>`],
  ["Latency", (s) => `<td class="num">${count(s.latency_ms, " ms")}</td>`],
  ["Calls", (s) => `<td class="num">${count(s.calls)}</td>`],
  ["Errors", (s) => `<td class="num">${count(s.errors)}</td>`],
  ["Error rate", (s) => `<td class="num">${percent(s.error_rate)}</td>`],
  ["In flight", (s) => `<td class="num">${count(s.in_flight)}</td>`],
  ["Tools", (s) => `<td class="num">${count(s.tools)}</td>`],
  [
    "PID",
    (s) => `<td class="num">${s.pid === null ? DASH : String(s.pid)}</td>`,
  ],
  ["Restarts", (s) => `<td class="num">${count(s.restarts)}</td>`],
  [
    "Last error",
    (s) => `<td class="error">${escapeHtml(s.last_error ?? "")}</td>`,
  ],
];

function serverRow(server: AdminServer, day: string): string {
  const cells = SERVER_COLUMNS.map(([, cell]) => cell(server, day)).join("");
  return `<tr data-server="${escapeHtml(server.name)}" data-state="${
    escapeHtml(server.state)
  }">${cells}</tr>`;
}

function toolRow(tool: AdminTool): string {
  const marker = tool.shortened
    ? ` <span class="shortened" title="shortened to fit 64 characters">shortened</span>`
    : "";
  return `<tr data-tool="${escapeHtml(tool.name)}">` +
    `<td class="name"><code>${escapeHtml(tool.name)}</code>${marker}</td>` +
    `<td>${escapeHtml(tool.group)}</td>` +
    `<td><code>${escapeHtml(tool.tool)}</code></td>` +
    `<td class="description">${escapeHtml(tool.description)}</td></tr>`;
}

function table(
  id: string,
  headings: string[],
  rows: string[],
  empty: string,
): string {
  const head = headings.map((heading) => `<th scope="col">${heading}</th>`)
    .join("");
  const body = rows.length > 0
    ? rows.join("\n")
    : `<tr class="empty"><td colspan="${headings.length}">${empty}</td></tr>`;
  return `<div class="scroll"><table id="${id}"><thead><tr>${head}</tr></thead>\n<tbody>\n${body}\n</tbody></table></div>`;
}

const TOOL_HEADINGS = ["Gateway name", "Group", "Upstream tool", "Description"];

/** The part the refresh script swaps: everything that depends on the view. */
function renderMain(view: AdminView): string {
  const day = dayOf(view.generated_at);
  const healthy = view.servers.filter((s) => s.state === "healthy").length;
  const summary = [
    ["Version", escapeHtml(view.version)],
    ["Generated", `${escapeHtml(day)} ${time(view.generated_at, day)} UTC`],
    ["Balance", escapeHtml(view.balance.replaceAll("_", " "))],
    ["Health check every", `${count(view.health_interval_ms / 1000)} s`],
    ["Servers", `${healthy} of ${view.servers.length} healthy`],
    ["Tools", count(view.tools.length)],
  ].map(([term, value]) => `<div><dt>${term}</dt><dd>${value}</dd></div>`);
  return `<main id="admin">
<header><h1>agentd gateway</h1><dl id="summary">${
    summary.join("")
  }</dl></header>
<section><h2>Servers</h2>
${
    table(
      "servers",
      SERVER_COLUMNS.map(([heading]) => heading),
      view.servers.map((server) => serverRow(server, day)),
      "No servers configured.",
    )
  }
</section>
<section><h2>Tools</h2>
${table("tools", TOOL_HEADINGS, view.tools.map(toolRow), "No tools exposed.")}
</section>
</main>`;
}

const STYLE = `
:root { color-scheme: light dark; --muted: #6b7280; --line: #d1d5db55; }
body { font: 13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1rem 1.25rem; }
h1 { font-size: 1.3rem; margin: 0 0 .5rem; }
h2 { font-size: 1rem; margin: 1.5rem 0 .4rem; }
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
td.target { min-width: 7rem; max-width: 16rem; }
td.state { font-weight: 600; }
tr[data-state="healthy"] td.state { color: #15803d; }
tr[data-state="unhealthy"] td.state { color: #dc2626; }
tr[data-state="connecting"] td.state { color: #b45309; }
tr[data-state="stopped"] td.state { color: var(--muted); }
td.error { color: #dc2626; min-width: 9rem; max-width: 28rem; overflow-wrap: anywhere; }
.shortened { font-size: .75rem; padding: 0 .3rem; border: 1px solid currentColor; border-radius: .3rem; color: #b45309; }
tr.empty td { color: var(--muted); font-style: italic; }
#refresh { color: var(--muted); font-size: .8rem; }
#refresh.stale { color: #dc2626; }
`;

/**
 * Re-fetches the page's `<main>` and swaps it in, so one renderer serves
 * both. Only the fragment is parsed: re-parsing the whole page would trip
 * the CSP on its nonce'd `<style>`.
 */
function refreshScript(refreshMs: number): string {
  return `
const status = document.getElementById("refresh");
async function refresh() {
  try {
    const response = await fetch(location.pathname + "?format=fragment", { cache: "no-store" });
    if (!response.ok) throw new Error("HTTP " + response.status);
    const next = new DOMParser().parseFromString(await response.text(), "text/html").getElementById("admin");
    const current = document.getElementById("admin");
    if (next && current) current.replaceWith(document.adoptNode(next));
    status.textContent = "Refreshes every ${refreshMs / 1000} s";
    status.classList.remove("stale");
  } catch (error) {
    status.textContent = "Refresh failed (" + error.message + "); showing older data";
    status.classList.add("stale");
  }
  setTimeout(refresh, ${refreshMs});
}
setTimeout(refresh, ${refreshMs});
`;
}

function renderPage(
  view: AdminView,
  options: { nonce: string; refreshMs: number },
): string {
  const { nonce, refreshMs } = options;
  const refresh = refreshMs > 0
    ? `<p id="refresh">Refreshes every ${refreshMs / 1000} s</p>
<script nonce="${nonce}">${refreshScript(refreshMs)}</script>`
    : "";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>agentd gateway</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
${renderMain(view)}
${refresh}
</body>
</html>
`;
}
