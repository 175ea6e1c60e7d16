// The dashboard's HTML shell and styles. Nothing here holds data or
// secrets: the script (web/src/dashboard.ts, bundled into scripts.ts) fills
// the panels from the API.

import { htmlPage } from "./page.ts";
import { DASHBOARD_SCRIPT } from "./scripts.ts";

const STYLE = `
:root { color-scheme: light dark; --muted: #6b7280; --line: #d1d5db66; --accent: #2563eb; --bad: #dc2626; --good: #15803d; --warn: #b45309; --panel: #8881; }
* { box-sizing: border-box; }
body { font: 13px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; }
a.skip { position: absolute; left: -999px; }
a.skip:focus { left: .5rem; top: .5rem; background: Canvas; padding: .3rem; }
header.top { display: flex; align-items: baseline; gap: 1rem; padding: .6rem 1rem; border-bottom: 1px solid var(--line); }
header.top h1 { font-size: 1.2rem; margin: 0; }
#status { color: var(--muted); font-size: .85rem; margin-left: auto; }
#status.stale { color: var(--bad); }
main { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: .8rem; padding: .8rem 1rem; }
section.panel { background: var(--panel); border: 1px solid var(--line); border-radius: .4rem; padding: .5rem .7rem; min-width: 0; }
section.wide { grid-column: 1 / -1; }
h2 { font-size: 1rem; margin: .1rem 0 .4rem; }
h3 { font-size: .9rem; margin: .6rem 0 .3rem; }
.scroll { overflow: auto; max-height: 18rem; }
table { border-collapse: collapse; width: 100%; font-size: 12px; }
th, td { padding: .2rem .35rem; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { color: var(--muted); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.err, .err { color: var(--bad); overflow-wrap: anywhere; }
.state-healthy, .status-completed { color: var(--good); font-weight: 600; }
.state-unhealthy, .status-failed { color: var(--bad); font-weight: 600; }
.state-connecting, .status-running { color: var(--warn); font-weight: 600; }
.badge { display: inline-block; padding: 0 .5rem; margin-right: .25rem; border-radius: 999px; border: 1px solid currentColor; font-size: 11px; font-weight: 600; line-height: 1.6; white-space: nowrap; }
.tone-good { color: var(--good); background: #15803d12; }
.tone-warn { color: var(--warn); background: #b4530914; }
.tone-bad { color: #fff; background: var(--bad); border-color: var(--bad); }
.tone-quiet { color: var(--muted); }
table.servers th.name { color: inherit; font-weight: 600; white-space: nowrap; }
table.servers tr.server > * { vertical-align: middle; }
table.servers td.phase { white-space: nowrap; width: 1%; }
table.servers th.num { text-align: right; }
table.servers td.more { text-align: right; width: 1%; }
table.servers tr.server:has(+ tr.problem-row) > * { border-bottom: 0; }
table.servers button.toggle { padding: 0 .45rem; font-size: 11px; white-space: nowrap; }
table.servers button.toggle::before { content: "▸ "; }
table.servers button.toggle[aria-expanded="true"]::before { content: "▾ "; }
.callout { border-left: 4px solid var(--bad); background: #dc262612; padding: .35rem .6rem; border-radius: 0 .3rem .3rem 0; overflow-wrap: anywhere; }
.callout strong { color: var(--bad); }
.callout .fix { margin-top: .15rem; }
div.health { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 2fr); align-items: start; gap: .5rem; margin: .1rem 0 .3rem; }
div.health pre { max-height: 16rem; overflow: auto; margin: 0; padding: .4rem .6rem; background: Canvas; border: 1px solid var(--line); border-radius: .3rem; }
.empty { color: var(--muted); font-style: italic; }
code, pre { font: 11.5px ui-monospace, Menlo, monospace; overflow-wrap: anywhere; white-space: pre-wrap; }
button, select, input, textarea { font: inherit; }
button { cursor: pointer; padding: .2rem .6rem; }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 1px; }
form.row { display: flex; gap: .4rem; align-items: center; flex-wrap: wrap; margin: .3rem 0; }
#chat-log { height: 16rem; overflow: auto; border: 1px solid var(--line); padding: .4rem; border-radius: .3rem; background: Canvas; }
#chat-log .user { font-weight: 600; margin-top: .4rem; }
#chat-log .answer { white-space: pre-wrap; }
#chat-log .tool { color: var(--muted); font-size: 12px; border-left: 3px solid var(--accent); padding-left: .4rem; margin: .2rem 0; }
#chat-message { width: 100%; min-height: 3.2rem; }
dl.fields { display: flex; flex-wrap: wrap; gap: .2rem 1.2rem; margin: 0 0 .3rem; }
dl.fields dt { color: var(--muted); font-size: .8rem; }
dl.fields dd { margin: 0; font-weight: 600; }
#approvals code.call { display: block; max-width: 36rem; max-height: 12rem; overflow: auto; white-space: pre-wrap; word-break: break-all; }
#approvals .actions { white-space: nowrap; }
#audit-filter { min-width: 18rem; }
#audit-count { color: var(--muted); }
.decision-denied, .decision-declined, .decision-timeout, .outcome-refused, .outcome-error { color: var(--bad); font-weight: 600; }
.decision-approved { color: var(--good); font-weight: 600; }
`;

export function renderDashboard(options: {
  nonce: string;
  version: string;
  refreshMs: number;
}): string {
  const { nonce } = options;
  return htmlPage({
    title: "agentd dashboard",
    nonce,
    style: STYLE,
    body: `<a class="skip" href="#approvals">Skip to approvals</a>
<a class="skip" href="#chat">Skip to chat</a>
<a class="skip" href="#audit-filter">Skip to audit</a>
<header class="top"><h1>agentd</h1><span id="version">${
      options.version.replace(/[^0-9A-Za-z.+-]/g, "")
    }</span><span id="status" role="status" aria-live="polite">Loading…</span></header>
<main data-refresh-ms="${Math.round(options.refreshMs)}">
<section class="panel wide" id="approvals" aria-labelledby="approvals-h"><h2 id="approvals-h">Approvals</h2><div class="body"><p class="empty">Loading…</p></div>
<p id="approvals-state" role="status" aria-live="polite"></p>
</section>
<section class="panel wide" id="servers" aria-labelledby="servers-h"><h2 id="servers-h">Servers</h2><div class="body"><p class="empty">Loading…</p></div></section>
<section class="panel" id="agents" aria-labelledby="agents-h"><h2 id="agents-h">Agents and teams</h2><div class="body"><p class="empty">Loading…</p></div></section>
<section class="panel" id="chat" aria-labelledby="chat-h"><h2 id="chat-h">Chat</h2>
<form id="chat-form" class="row">
<label for="chat-agent">Agent</label> <select id="chat-agent" required></select>
<button type="submit" id="chat-send">Send</button> <span id="chat-state" role="status" aria-live="polite"></span>
<textarea id="chat-message" aria-label="Message" placeholder="Message (Ctrl+Enter sends)" required></textarea>
</form>
<div id="chat-log" aria-live="polite" tabindex="0"></div>
</section>
<section class="panel" id="memory" aria-labelledby="memory-h"><h2 id="memory-h">Memory</h2><div class="body"><p class="empty">Loading…</p></div>
<form id="memory-form" class="row">
<label for="memory-namespace">Namespace</label> <select id="memory-namespace"></select>
<input id="memory-query" type="search" aria-label="Search memory" placeholder="Search…" required>
<button type="submit">Search</button>
</form>
<div id="memory-results" aria-live="polite"></div>
</section>
<section class="panel" id="platforms" aria-labelledby="platforms-h"><h2 id="platforms-h">Platform connections</h2><div class="body"><p class="empty">Loading…</p></div>
<p id="platforms-state" role="status" aria-live="polite"></p>
</section>
<section class="panel wide" id="runs" aria-labelledby="runs-h"><h2 id="runs-h">Recent runs</h2><div class="body"><p class="empty">Loading…</p></div></section>
<section class="panel wide" id="tasks" aria-labelledby="tasks-h"><h2 id="tasks-h">Tasks</h2><div class="body"><p class="empty">Loading…</p></div></section>
<section class="panel wide" id="audit-panel" aria-labelledby="audit-h"><h2 id="audit-h">Audit</h2>
<form id="audit-form" class="row" role="search">
<label for="audit-filter">Filter by server.tool</label> <input id="audit-filter" type="search" placeholder="e.g. memory or desktop-control.file_write" autocomplete="off">
<span id="audit-count" role="status" aria-live="polite"></span>
</form>
<div id="audit"><div class="body"><p class="empty">Loading…</p></div></div>
</section>
<section class="panel wide" id="gateway" aria-labelledby="gateway-h"><h2 id="gateway-h">Gateway</h2><div class="body"><p class="empty">Loading…</p></div></section>
</main>
<script nonce="${nonce}">${DASHBOARD_SCRIPT}</script>`,
  });
}
