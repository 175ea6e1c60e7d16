// The dashboard's browser script: reads the daemon's API with the session
// cookie (same origin), rebuilds each panel with DOM nodes (never HTML from
// data), streams chat answers from /v1/agents/{id}/send, searches memory and
// manages platform connections through the servers' MCP endpoints
// (dashboard_mcp.ts; Approvals and Audit: dashboard_policy.ts). Bundled by
// web/build.ts into web/scripts.ts; the page (web/dashboard_page.ts) sets
// the refresh interval as `data-refresh-ms` on <main>.

/// <reference lib="dom" />

import { onMemorySearch, refreshPlatforms } from "./dashboard_mcp.ts";
import { refreshPolicy, watchAuditFilter } from "./dashboard_policy.ts";
import {
  byId,
  clip,
  type Column,
  el,
  errorText,
  fill,
  getHealth,
  getJson,
  type Health,
  messageOf,
  type ServerView,
  shown,
  sseEvents,
  statusOf,
  table,
  time,
} from "./dom.ts";

// Servers: /health, one row per server: a badge for its phase (and status
// when running but not ok), the one line its health reports as "summary",
// an Error phase's message in full, and the whole health object on demand.
const serversOpen = new Set<string>();
/** /health's phase of a server `serve` has not loaded yet. */
const NOT_LOADED = "not_loaded";

function toneOf(server: ServerView): string {
  if (server.phase === "error") return "bad";
  // Not loaded yet (`serve` loads servers on first use): nothing is wrong.
  if (server.phase === NOT_LOADED) return "quiet";
  if (server.phase === "start") return "warn";
  if (server.phase !== "running") return "quiet";
  const status = server.details && server.details.status;
  if (server.degraded === true || status === "degraded") return "warn";
  return status === "waiting" ? "quiet" : "good";
}

function badge(text: string, tone: string, title?: string): HTMLElement {
  return el("span", { class: "badge tone-" + tone, text, title });
}

/** What a running server's health said went wrong, when it said so. */
function problemOf(server: ServerView): string {
  if (server.error) return server.error;
  const details = server.details;
  return details && typeof details.error === "string" && !details.summary
    ? details.error
    : "";
}

/** Our errors read "what failed, why. What to do.": the first sentence leads. */
function errorBlock(text: string): HTMLElement {
  const cut = text.search(/\.\s+(?=[A-Z])/);
  const head = cut === -1 ? text : text.slice(0, cut + 1);
  const rest = cut === -1 ? "" : text.slice(cut + 1).trim();
  // No role="alert": the panel is rebuilt every few seconds and would be re-announced.
  return el(
    "div",
    { class: "callout" },
    el("strong", { text: head }),
    rest ? el("div", { class: "fix", text: rest }) : null,
  );
}

/** The health object as indented "key: value" lines, nested objects below their key. */
function readable(value: object, depth: number): string {
  const pad = "  ".repeat(depth);
  const lines = [];
  for (const [key, item] of Object.entries(value)) {
    if (item !== null && typeof item === "object" && !Array.isArray(item)) {
      lines.push(
        pad + key + ":" +
          (Object.keys(item).length === 0
            ? " none"
            : "\n" + readable(item, depth + 1)),
      );
    } else if (Array.isArray(item)) {
      if (item.length === 0) lines.push(pad + key + ": none");
      else if (item.every((x) => x === null || typeof x !== "object")) {
        lines.push(pad + key + ": " + item.map(shown).join(", "));
      } else {
        lines.push(
          pad + key + ":\n" +
            item.map((x) => pad + "  - " + shown(x)).join("\n"),
        );
      }
    } else lines.push(pad + key + ": " + shown(item));
  }
  return lines.join("\n");
}

function uptime(seconds: number): string {
  if (seconds < 120) return seconds + " s";
  const minutes = Math.floor(seconds / 60);
  if (minutes < 120) return minutes + " min";
  const hours = Math.floor(minutes / 60);
  return hours < 48
    ? hours + " h " + (minutes % 60) + " min"
    : Math.floor(hours / 24) + " d " + (hours % 24) + " h";
}

function serverRows(
  id: string,
  server: ServerView,
  index: number,
): HTMLElement[] {
  const tone = toneOf(server);
  const status = server.details && server.details.status;
  const detailsId = "server-details-" + index;
  const open = serversOpen.has(id);
  const problem = problemOf(server);
  const summary = server.phase === "running"
    ? (server.details && server.details.summary) || ""
    : server.phase === "start"
    ? "starting…"
    : server.phase === "shutdown"
    ? "shutting down"
    : server.phase === NOT_LOADED
    ? "loads on first use"
    : "";
  const toggle = el("button", {
    type: "button",
    class: "toggle",
    "aria-expanded": String(open),
    "aria-controls": detailsId,
    "data-toggle": id,
    "aria-label": "Health details of " + id,
    text: "Details",
  });
  // The host's own fields beside what the server reports about itself.
  const { details, ...own } = server;
  const detailsRow = el(
    "tr",
    { class: "details-row", id: detailsId },
    el(
      "td",
      { colspan: "6" },
      el(
        "div",
        { class: "health" },
        el("pre", {
          tabindex: "0",
          "aria-label": id + ": phase, calls, sessions",
          text: readable(own, 0),
        }),
        details && typeof details === "object"
          ? el("pre", {
            tabindex: "0",
            "aria-label": id + ": its health details",
            text: readable(details, 0),
          })
          : null,
      ),
    ),
  );
  detailsRow.hidden = !open;
  toggle.addEventListener("click", () => {
    const opening = !serversOpen.has(id);
    if (opening) serversOpen.add(id);
    else serversOpen.delete(id);
    toggle.setAttribute("aria-expanded", String(opening));
    detailsRow.hidden = !opening;
  });
  const rows = [el(
    "tr",
    { "data-key": id, class: "server tone-row-" + tone },
    el("th", { scope: "row", class: "name", text: id }),
    el(
      "td",
      { class: "phase" },
      badge(
        server.phase === NOT_LOADED ? "not loaded" : server.phase,
        tone,
        server.since ? "since " + time(server.since) : undefined,
      ),
      server.phase === "running" && status && status !== "ok"
        ? badge(status, tone)
        : null,
    ),
    el("td", { class: "summary", text: summary }),
    el("td", { class: "num", text: shown(server.calls) }),
    el("td", {
      class: "num" + ((server.errors ?? 0) > 0 ? " err" : ""),
      text: shown(server.errors),
    }),
    el("td", { class: "more" }, toggle),
  )];
  if (problem) {
    rows.push(
      el(
        "tr",
        { class: "problem-row" },
        el("td", { colspan: "6" }, errorBlock(problem)),
      ),
    );
  }
  rows.push(detailsRow);
  return rows;
}

function renderServers(health: Health): void {
  const entries = Object.entries(health.servers);
  const active = document.activeElement;
  const focused = active instanceof HTMLElement
    ? active.dataset.toggle
    : undefined;
  const daemonTone = health.status === "ok"
    ? "good"
    : health.status === "degraded"
    ? "warn"
    : "bad";
  const head = el(
    "tr",
    {},
    ...["Server", "Phase", "Summary", "Calls", "Errors", ""].map((label) =>
      el("th", {
        scope: "col",
        class: label === "Calls" || label === "Errors" ? "num" : undefined,
        text: label,
      })
    ),
  );
  fill(
    "servers",
    el(
      "dl",
      { class: "fields" },
      el(
        "div",
        {},
        el("dt", { text: "Daemon" }),
        el("dd", { id: "daemon-status" }, badge(health.status, daemonTone)),
      ),
      el(
        "div",
        {},
        el("dt", { text: "Uptime" }),
        el("dd", { text: uptime(health.uptime_s) }),
      ),
    ),
    entries.length === 0
      ? el("p", { class: "empty", text: "No servers are running" })
      : el(
        "table",
        { class: "servers" },
        el("thead", {}, head),
        el(
          "tbody",
          {},
          ...entries.flatMap(([id, server], index) =>
            serverRows(id, server, index)
          ),
        ),
      ),
  );
  // The panel is rebuilt on every refresh: keep keyboard focus on the same toggle.
  if (focused) {
    const again = document.querySelector<HTMLElement>(
      '#servers button[data-toggle="' + CSS.escape(focused) + '"]',
    );
    if (again) again.focus();
  }
}

type AdminColumn = { label: string; key: string; format?: string };
type AdminRow = Record<string, unknown>;
type Admin = {
  sections: {
    server?: string;
    title: string;
    fields: { label: string; value: unknown; format?: string }[];
    tables: {
      id: string;
      title: string;
      columns: AdminColumn[];
      rows: AdminRow[];
      empty: string;
      row_key: string;
    }[];
  }[];
};

/** Gateway: the /admin sections (upstreams, tool catalog), rendered from their JSON. */
function renderGateway(admin: Admin | null): void {
  if (admin === null) {
    fill(
      "gateway",
      el("p", {
        class: "empty",
        text:
          "No server here has an admin section (the gateway is not running).",
      }),
    );
    return;
  }
  const nodes = [];
  // The tasks section has its own panel (renderTasks).
  for (const section of admin.sections.filter((s) => s.server !== "tasks")) {
    nodes.push(el("h3", { text: section.title }));
    if (section.fields.length > 0) {
      nodes.push(el(
        "dl",
        { class: "fields" },
        ...section.fields.map((f) =>
          el(
            "div",
            {},
            el("dt", { text: f.label }),
            el("dd", {
              class: f.format === "error" ? "err" : undefined,
              text: shown(f.value),
            }),
          )
        ),
      ));
    }
    for (const t of section.tables) {
      nodes.push(el("h3", { text: t.title }));
      const state = t.columns.find((c) => c.format === "state");
      const node = table<AdminRow>(
        t.columns.map((c) => ({
          label: c.label,
          key: c.key,
          cls: c === state
            ? (r) => "state-" + r[c.key]
            : c.format === "error"
            ? () => "err"
            : undefined,
          value: (r) =>
            c.format === "time"
              ? time(typeof r[c.key] === "string" ? String(r[c.key]) : null)
              : r[c.key] === true
              ? "yes"
              : r[c.key] === false
              ? ""
              : r[c.key],
        })),
        t.rows,
        t.empty,
        t.row_key,
      );
      const tableNode = node.querySelector("table");
      if (tableNode) tableNode.id = "gw-" + t.id;
      nodes.push(node);
    }
  }
  fill("gateway", ...nodes);
}

/**
 * A heading counting `rows`, then their table keyed by name: Name,
 * `columns`, Created, then `after`.
 */
function namedTable<R extends { name: string; created_at: string }>(
  title: string,
  rows: R[],
  columns: Column<R>[],
  empty: string,
  after: Column<R>[] = [],
): HTMLElement[] {
  return [
    el("h3", { text: title + " (" + rows.length + ")" }),
    table<R>(
      [
        { label: "Name", key: "name" },
        ...columns,
        { label: "Created", value: (r) => time(r.created_at) },
        ...after,
      ],
      rows,
      empty,
      "name",
    ),
  ];
}

type Agent = {
  id: string;
  name: string;
  model: string;
  tools?: string[];
  resolved_tools?: string[];
  created_at: string;
};
type Team = {
  id: string;
  name: string;
  strategy: string;
  agents: string[];
  created_at: string;
};
type Run = {
  id: string;
  team_id: string;
  status: string;
  stop_reason?: string;
  steps: unknown[];
  error?: { message: string } | null;
  output?: unknown;
  created_at: string;
};

let agentsById = new Map<string, Agent>();
let agentsShown = "";

function renderAgents(agents: Agent[], teams: Team[]): void {
  // Unchanged data keeps its nodes, so keyboard focus on a button survives the refresh.
  const signature = JSON.stringify([agents, teams]);
  if (signature === agentsShown) return;
  agentsShown = signature;
  agentsById = new Map(agents.map((a) => [a.id, a]));
  const chatButton = (agent: Agent) => {
    const button = el("button", {
      type: "button",
      text: "Chat",
      "aria-label": "Chat with " + agent.name,
    });
    button.addEventListener("click", () => {
      byId("chat-agent", HTMLSelectElement).value = agent.id;
      byId("chat-message", HTMLTextAreaElement).focus();
    });
    return button;
  };
  fill(
    "agents",
    ...namedTable(
      "Agents",
      agents,
      [
        { label: "Model", key: "model" },
        {
          label: "Tools",
          value: (a) => (a.resolved_tools || a.tools || []).length,
          cls: () => "num",
        },
      ],
      "No agents yet: POST /v1/agents creates one",
      [{ label: "", value: chatButton }],
    ),
    ...namedTable("Teams", teams, [
      { label: "Strategy", key: "strategy" },
      {
        label: "Agents",
        value: (t) =>
          t.agents.map((id) => (agentsById.get(id) || { name: id }).name)
            .join(", "),
      },
    ], "No teams yet"),
  );
  const select = byId("chat-agent", HTMLSelectElement);
  const current = select.value;
  const options = agents.map((a) =>
    el("option", { value: a.id, text: a.name + " (" + a.model + ")" })
  );
  const same = select.options.length === options.length &&
    options.every((o, i) =>
      select.options[i].value === o.getAttribute("value")
    );
  if (!same) {
    select.replaceChildren(...options);
    if (agentsById.has(current)) select.value = current;
  }
}

function renderRuns(runs: Run[], teams: Team[]): void {
  const names = new Map(teams.map((t) => [t.id, t.name]));
  const recent = runs.slice(-20).reverse();
  fill(
    "runs",
    table<Run>(
      [
        { label: "Run", key: "id", value: (r) => el("code", { text: r.id }) },
        { label: "Team", value: (r) => names.get(r.team_id) || r.team_id },
        {
          label: "Status",
          key: "status",
          cls: (r) => "status status-" + r.status,
        },
        { label: "Stop", key: "stop_reason" },
        { label: "Steps", value: (r) => r.steps.length, cls: () => "num" },
        {
          label: "Output",
          value: (r) => r.error ? r.error.message : clip(r.output, 160),
          cls: (r) => r.error ? "err" : undefined,
        },
        { label: "Started", value: (r) => time(r.created_at) },
      ],
      recent,
      "No team runs yet",
      "id",
    ),
  );
}

/** An MCP task as /admin/tasks lists it (tools/kit/tasks.ts TaskRow). */
type TaskRow = {
  id: string;
  server: string;
  tool: string;
  status: string;
  message: string | null;
  caller: string;
  created: string;
  updated: string;
};

/** Tasks: long tool calls clients run as MCP tasks, newest first. */
function renderTasks(tasks: TaskRow[] | null): void {
  if (tasks === null) {
    fill(
      "tasks",
      el("p", { class: "empty", text: "No server here runs tasks." }),
    );
    return;
  }
  fill(
    "tasks",
    table<TaskRow>(
      [
        { label: "Server", key: "server" },
        { label: "Tool", key: "tool" },
        {
          label: "Status",
          key: "status",
          cls: (t) => "status status-" + t.status,
        },
        {
          label: "Message",
          value: (t) => clip(t.message, 160),
          cls: (t) => t.status === "failed" ? "err" : undefined,
        },
        { label: "Caller", key: "caller" },
        { label: "Created", value: (t) => time(t.created) },
        { label: "Updated", value: (t) => time(t.updated) },
        { label: "Task", value: (t) => el("code", { text: t.id.slice(-12) }) },
      ],
      tasks.slice(0, 30),
      "No tasks yet: a client runs a tool as a task with params.task",
      "id",
    ),
  );
}

function renderMemory(health: Health): void {
  const memory = health.servers.memory;
  const counts = memory && memory.details &&
    memory.details.entries_per_namespace;
  if (!memory) {
    fill(
      "memory",
      el("p", {
        class: "empty",
        text: "The memory server is not enabled on this daemon.",
      }),
    );
    return;
  }
  const rows = Object.entries(counts || {}).map(([namespace, entries]) => ({
    namespace,
    entries,
  }));
  fill(
    "memory",
    table(
      [
        { label: "Namespace", key: "namespace" },
        { label: "Entries", key: "entries", cls: () => "num" },
      ],
      rows,
      memory.phase === "running"
        ? "No memories stored yet"
        : memory.phase === NOT_LOADED
        ? "The memory server loads on first use"
        : "Memory server is " + memory.phase,
      "namespace",
    ),
  );
  const select = byId("memory-namespace", HTMLSelectElement);
  const current = select.value;
  if (
    select.options.length !== rows.length ||
    rows.some((r, i) => select.options[i].value !== r.namespace)
  ) {
    select.replaceChildren(
      ...rows.map((r) =>
        el("option", { value: r.namespace, text: r.namespace })
      ),
    );
    if (rows.some((r) => r.namespace === current)) select.value = current;
  }
}

async function listAll<T>(path: string): Promise<T[]> {
  const data: T[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 20; page++) {
    const body: { data: T[]; next_cursor: string | null } = await getJson(
      path + (path.includes("?") ? "&" : "?") + "limit=100" +
        (cursor ? "&cursor=" + encodeURIComponent(cursor) : ""),
    );
    data.push(...body.data);
    cursor = body.next_cursor;
    if (!cursor) break;
  }
  return data;
}

/** A 404 (that part is not served here) reads as `absent`. */
function unlessMissing<T>(absent: T): (error: unknown) => T {
  return (error) => {
    if (statusOf(error) === 404) return absent;
    throw error;
  };
}

async function refresh(): Promise<void> {
  const status = byId("status", HTMLElement);
  try {
    const [health, admin, agents, teams, runs, tasks] = await Promise.all([
      getHealth(),
      getJson<Admin>("/admin?format=json").catch(unlessMissing(null)),
      listAll<Agent>("/v1/agents").catch(unlessMissing<Agent[]>([])),
      listAll<Team>("/v1/teams").catch(unlessMissing<Team[]>([])),
      listAll<Run>("/v1/runs").catch(unlessMissing<Run[]>([])),
      getJson<{ tasks: TaskRow[] }>("/admin/tasks").then((body) => body.tasks)
        .catch(unlessMissing(null)),
    ]);
    renderServers(health);
    renderGateway(admin);
    renderAgents(agents, teams);
    renderRuns(runs, teams);
    renderTasks(tasks);
    renderMemory(health);
    await refreshPlatforms(health);
    await refreshPolicy();
    status.textContent = "Live · updated " + new Date().toLocaleTimeString();
    status.classList.remove("stale");
    document.body.dataset.loaded = "true";
  } catch (error) {
    status.textContent = "Update failed (" + messageOf(error) +
      "); showing older data";
    status.classList.add("stale");
  }
}

// Chat: POST /v1/agents/{id}/send with stream: true, read as server-sent events.
function chatLine(cls: string, text: string): HTMLElement {
  const log = byId("chat-log", HTMLElement);
  const line = el("div", { class: cls, text });
  log.append(line);
  log.scrollTop = log.scrollHeight;
  return line;
}

type ChatEvent = {
  delta?: string;
  id?: string;
  name?: string;
  arguments?: unknown;
  is_error?: boolean;
  result?: unknown;
  content?: string;
  stop_reason?: string;
  usage?: { output_tokens: number };
  error?: { message: string };
};

async function sendChat(event: Event): Promise<void> {
  event.preventDefault();
  const agentId = byId("chat-agent", HTMLSelectElement).value;
  const input = byId("chat-message", HTMLTextAreaElement);
  const state = byId("chat-state", HTMLElement);
  const message = input.value.trim();
  if (!agentId || !message) return;
  const agent = agentsById.get(agentId);
  const button = byId("chat-send", HTMLButtonElement);
  button.disabled = true;
  state.textContent = "Waiting for " + (agent ? agent.name : agentId) + "…";
  chatLine("user", "You → " + (agent ? agent.name : agentId) + ": " + message);
  input.value = "";
  const answer = chatLine("answer", "");
  const tools = new Map<string | undefined, HTMLElement>();
  try {
    const response = await fetch(
      "/v1/agents/" + encodeURIComponent(agentId) + "/send",
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "text/event-stream",
        },
        body: JSON.stringify({ message, stream: true }),
      },
    );
    if (!response.ok) {
      throw new Error(
        "HTTP " + response.status + " " + (await errorText(response)),
      );
    }
    state.textContent = "Streaming…";
    for await (const { event, data } of sseEvents<ChatEvent>(response)) {
      if (event === "text") answer.textContent += data.delta ?? "";
      else if (event === "tool_call_start") {
        const line = chatLine(
          "tool",
          "⚙ " + data.name + " " + JSON.stringify(data.arguments),
        );
        answer.before(line); // tool calls read above the answer they led to
        tools.set(data.id, line);
      } else if (event === "tool_call_end") {
        const line = tools.get(data.id) || chatLine("tool", "⚙ " + data.name);
        line.append(
          el("div", {
            class: data.is_error ? "err" : undefined,
            text: (data.is_error ? "✗ " : "→ ") + clip(data.result, 400),
          }),
        );
      } else if (event === "done") {
        if (!answer.textContent) answer.textContent = data.content ?? "";
        state.textContent = "Done (" + data.stop_reason + ", " +
          data.usage?.output_tokens + " tokens out)";
      } else if (event === "error") {
        throw new Error(data.error?.message);
      }
    }
    answer.dataset.done = "true";
  } catch (error) {
    chatLine("err", "Error: " + messageOf(error));
    state.textContent = "Failed";
  } finally {
    button.disabled = false;
  }
}

const chatForm = byId("chat-form", HTMLFormElement);
chatForm.addEventListener("submit", sendChat);
byId("chat-message", HTMLTextAreaElement).addEventListener(
  "keydown",
  (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      chatForm.requestSubmit();
    }
  },
);
byId("memory-form", HTMLFormElement).addEventListener(
  "submit",
  onMemorySearch,
);
watchAuditFilter();

const refreshMs = Number(document.querySelector("main")?.dataset.refreshMs) ||
  3_000;

async function loop(): Promise<void> {
  await refresh();
  setTimeout(loop, refreshMs);
}
loop();
