// The Approvals and Audit panels: pending approvals from
// /admin/policy/approvals with Approve once / Approve for session / Deny,
// and the last audit records from /admin/policy/audit with a server.tool
// filter.

/// <reference lib="dom" />

import {
  byId,
  clip,
  el,
  errorText,
  fill,
  getJson,
  messageOf,
  statusOf,
  table,
  time,
} from "./dom.ts";

const AUDIT_LIMIT = 500;
const AUDIT_SHOWN = 100;

type Approval = {
  id: string;
  status: string;
  server: string;
  tool: string;
  caller: string;
  session?: string;
  runs?: string;
  args?: unknown;
  rule?: string;
  created: string;
  expires: string;
  scope?: string;
  decided_by?: string;
};

type AuditRecord = {
  id: string;
  time: string;
  caller: string;
  server: string;
  tool: string;
  args?: unknown;
  decision: string;
  decided_by?: string;
  rule?: string;
  outcome: string;
  duration_ms: number;
};

let approvalsShown = "";
let auditRecords: AuditRecord[] = [];
let auditShown = "";

function seconds(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? s + " s" : Math.floor(s / 60) + " min " + (s % 60) + " s";
}

function approvalButton(
  approval: Approval,
  verb: "approve" | "deny",
  scope: "once" | "session",
  label: string,
): HTMLButtonElement {
  const button = document.createElement("button");
  button.type = "button";
  button.dataset.action = verb === "deny" ? "deny" : "approve-" + scope;
  button.textContent = label;
  button.setAttribute(
    "aria-label",
    label + ": " + approval.server + "." + approval.tool + " (" + approval.id +
      ")",
  );
  button.addEventListener(
    "click",
    () => answerApproval(approval, verb, scope, button),
  );
  return button;
}

async function answerApproval(
  approval: Approval,
  verb: "approve" | "deny",
  scope: "once" | "session",
  button: HTMLButtonElement,
): Promise<void> {
  const row = button.closest("tr");
  const buttons = row ? [...row.querySelectorAll("button")] : [button];
  for (const b of buttons) b.disabled = true;
  const state = byId("approvals-state", HTMLElement);
  try {
    const response = await fetch(
      "/admin/policy/approvals/" + encodeURIComponent(approval.id) + "/" + verb,
      {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-agentd-client": "dashboard",
        },
        body: JSON.stringify({ scope }),
      },
    );
    if (!response.ok) {
      throw new Error(
        "HTTP " + response.status + " " + (await errorText(response)),
      );
    }
    state.textContent = (verb === "approve"
      ? "Approved " + (scope === "session" ? "for the session" : "once")
      : "Denied") +
      ": " + approval.server + "." + approval.tool + " (" + approval.id + ")";
  } catch (error) {
    state.textContent = "Could not answer " + approval.id + ": " +
      messageOf(error);
    for (const b of buttons) b.disabled = false;
  }
  await refreshPolicy();
}

function approvalActions(approval: Approval): HTMLElement {
  return el(
    "span",
    { class: "actions" },
    approvalButton(approval, "approve", "once", "Approve once"),
    " ",
    approvalButton(approval, "approve", "session", "Approve for session"),
    " ",
    approvalButton(approval, "deny", "once", "Deny"),
  );
}

function asker(a: Approval): string {
  return a.caller + (a.session ? " · session " + a.session.slice(0, 8) : "");
}

function renderApprovals(approvals: Approval[]): void {
  const now = Date.now();
  const pending = approvals.filter((a) => a.status === "pending");
  const settled = approvals.filter((a) => a.status !== "pending").slice(0, 10);
  byId("approvals-h", HTMLElement).textContent = "Approvals" +
    (pending.length > 0 ? " (" + pending.length + " waiting)" : "");
  // The same approvals keep their nodes (and the keyboard focus on a button); only the clocks tick.
  const signature = JSON.stringify([
    pending.map((a) => a.id),
    settled.map((a) => a.id + a.status),
  ]);
  if (signature === approvalsShown) {
    for (const a of pending) {
      const row = document.querySelector(
        '#approvals-pending tr[data-key="' + CSS.escape(a.id) + '"]',
      );
      if (!row) continue;
      const age = row.querySelector("[data-age]");
      const left = row.querySelector("[data-left]");
      if (age) age.textContent = seconds(now - Date.parse(a.created));
      if (left) left.textContent = seconds(Date.parse(a.expires) - now);
    }
    return;
  }
  approvalsShown = signature;
  const nodes = [table<Approval>(
    [
      { label: "Who asks", value: (a) => asker(a) },
      { label: "Server", key: "server" },
      { label: "Tool", key: "tool" },
      {
        label: "Call",
        value: (a) =>
          el("code", {
            class: "call",
            text: a.runs ||
              (a.server + "." + a.tool + " " + JSON.stringify(a.args)),
          }),
      },
      { label: "Rule", key: "rule" },
      {
        label: "Age",
        value: (a) =>
          el("span", {
            "data-age": "",
            text: seconds(now - Date.parse(a.created)),
          }),
        cls: () => "num",
      },
      {
        label: "Time left",
        value: (a) =>
          el("span", {
            "data-left": "",
            text: seconds(Date.parse(a.expires) - now),
          }),
        cls: () => "num",
      },
      { label: "", value: approvalActions },
    ],
    pending,
    "Nothing is waiting for approval.",
    "id",
  )];
  if (settled.length > 0) {
    nodes.push(
      el("h3", { text: "Recently answered" }),
      table<Approval>(
        [
          { label: "Asked", value: (a) => time(a.created) },
          { label: "Who asked", value: (a) => asker(a) },
          { label: "Call", value: (a) => a.server + "." + a.tool },
          {
            label: "Answer",
            key: "status",
            cls: (a) => "decision decision-" + a.status,
          },
          { label: "Scope", key: "scope" },
          { label: "By", key: "decided_by" },
        ],
        settled,
        "",
        "id",
      ),
    );
  }
  for (
    const [node, id] of [[nodes[0], "approvals-pending"], [
      nodes[2],
      "approvals-answered",
    ]] as const
  ) {
    const tableNode = node ? node.querySelector("table") : null;
    if (tableNode) tableNode.id = id;
  }
  fill("approvals", ...nodes);
}

function renderAudit(): void {
  const filter = byId("audit-filter", HTMLInputElement).value.trim()
    .toLowerCase();
  const matching = auditRecords.filter((r) =>
    filter === "" || (r.server + "." + r.tool).toLowerCase().includes(filter)
  );
  const shownRecords = matching.slice(-AUDIT_SHOWN).reverse();
  const signature = filter + "|" + shownRecords.map((r) => r.id).join(",");
  if (signature === auditShown) return;
  auditShown = signature;
  byId("audit-count", HTMLElement).textContent = matching.length +
    " of the last " + auditRecords.length + " calls" +
    (matching.length > AUDIT_SHOWN
      ? " (newest " + AUDIT_SHOWN + " shown)"
      : "");
  fill(
    "audit",
    table<AuditRecord>(
      [
        { label: "Time", value: (r) => time(r.time) },
        { label: "Caller", key: "caller" },
        { label: "Call", value: (r) => r.server + "." + r.tool },
        {
          label: "Arguments",
          value: (r) => el("code", { text: clip(r.args, 200) }),
        },
        {
          label: "Decision",
          value: (r) =>
            r.decision + (r.decided_by ? " (" + r.decided_by + ")" : ""),
          cls: (r) => "decision decision-" + r.decision,
        },
        { label: "Rule", key: "rule" },
        {
          label: "Outcome",
          key: "outcome",
          cls: (r) => "outcome-" + r.outcome,
        },
        {
          label: "Duration",
          value: (r) => r.duration_ms + " ms",
          cls: () => "num",
        },
      ],
      shownRecords,
      filter
        ? "No call of a tool matching “" + filter + "”."
        : "No tool calls recorded yet.",
      "id",
    ),
  );
}

export async function refreshPolicy(): Promise<void> {
  try {
    const [{ approvals }, { records }] = await Promise.all([
      getJson<{ approvals: Approval[] }>("/admin/policy/approvals"),
      getJson<{ records: AuditRecord[] }>(
        "/admin/policy/audit?limit=" + AUDIT_LIMIT,
      ),
    ]);
    renderApprovals(approvals);
    auditRecords = records;
    renderAudit();
  } catch (error) {
    const missing = statusOf(error) === 404;
    const text = missing
      ? "No server here runs the policy guard."
      : "Cannot read the policy: " + messageOf(error);
    approvalsShown = auditShown = "";
    fill("approvals", el("p", { class: missing ? "empty" : "err", text }));
    fill("audit", el("p", { class: missing ? "empty" : "err", text }));
  }
}

/** The audit filter's listeners. */
export function watchAuditFilter(): void {
  byId("audit-filter", HTMLInputElement).addEventListener(
    "input",
    renderAudit,
  );
  byId("audit-form", HTMLFormElement).addEventListener(
    "submit",
    (event) => event.preventDefault(),
  );
}
