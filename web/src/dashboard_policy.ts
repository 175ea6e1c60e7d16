// The dashboard's Approvals and Audit panels (appended to dashboard_script.ts,
// whose el/table/fill/getJson/time/clip it uses): pending approvals from
// /admin/policy/approvals with Approve once / Approve for session / Deny, and
// the last audit records from /admin/policy/audit with a server.tool filter.

export const POLICY_SCRIPT = String.raw`
const AUDIT_LIMIT = 500;
const AUDIT_SHOWN = 100;
let approvalsShown = "";
let auditRecords = [];
let auditShown = "";

function seconds(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? s + " s" : Math.floor(s / 60) + " min " + (s % 60) + " s";
}

function approvalButton(approval, verb, scope, label) {
  const button = el("button", {
    type: "button",
    "data-action": verb === "deny" ? "deny" : "approve-" + scope,
    text: label,
    "aria-label": label + ": " + approval.server + "." + approval.tool + " (" + approval.id + ")",
  });
  button.addEventListener("click", () => answerApproval(approval, verb, scope, button));
  return button;
}

async function answerApproval(approval, verb, scope, button) {
  const row = button.closest("tr");
  const buttons = row ? [...row.querySelectorAll("button")] : [button];
  for (const b of buttons) b.disabled = true;
  const state = $("approvals-state");
  try {
    const response = await fetch("/admin/policy/approvals/" + encodeURIComponent(approval.id) + "/" + verb, {
      method: "POST",
      headers: { "content-type": "application/json", "x-agentd-client": "dashboard" },
      body: JSON.stringify({ scope }),
    });
    if (!response.ok) throw new Error("HTTP " + response.status + " " + (await errorText(response)));
    state.textContent = (verb === "approve" ? "Approved " + (scope === "session" ? "for the session" : "once") : "Denied") +
      ": " + approval.server + "." + approval.tool + " (" + approval.id + ")";
  } catch (error) {
    state.textContent = "Could not answer " + approval.id + ": " + error.message;
    for (const b of buttons) b.disabled = false;
  }
  await refreshPolicy();
}

function approvalActions(approval) {
  return el("span", { class: "actions" },
    approvalButton(approval, "approve", "once", "Approve once"), " ",
    approvalButton(approval, "approve", "session", "Approve for session"), " ",
    approvalButton(approval, "deny", "once", "Deny"));
}

function asker(a) {
  return a.caller + (a.session ? " · session " + a.session.slice(0, 8) : "");
}

function renderApprovals(approvals) {
  const now = Date.now();
  const pending = approvals.filter((a) => a.status === "pending");
  const settled = approvals.filter((a) => a.status !== "pending").slice(0, 10);
  $("approvals-h").textContent = "Approvals" + (pending.length > 0 ? " (" + pending.length + " waiting)" : "");
  // The same approvals keep their nodes (and the keyboard focus on a button); only the clocks tick.
  const signature = JSON.stringify([pending.map((a) => a.id), settled.map((a) => a.id + a.status)]);
  if (signature === approvalsShown) {
    for (const a of pending) {
      const row = document.querySelector('#approvals-pending tr[data-key="' + CSS.escape(a.id) + '"]');
      if (!row) continue;
      row.querySelector("[data-age]").textContent = seconds(now - Date.parse(a.created));
      row.querySelector("[data-left]").textContent = seconds(Date.parse(a.expires) - now);
    }
    return;
  }
  approvalsShown = signature;
  const nodes = [table([
      { label: "Who asks", value: (a) => asker(a) },
      { label: "Server", key: "server" },
      { label: "Tool", key: "tool" },
      { label: "Call", value: (a) => el("code", { class: "call", text: a.runs || (a.server + "." + a.tool + " " + JSON.stringify(a.args)) }) },
      { label: "Rule", key: "rule" },
      { label: "Age", value: (a) => el("span", { "data-age": "", text: seconds(now - Date.parse(a.created)) }), cls: () => "num" },
      { label: "Time left", value: (a) => el("span", { "data-left": "", text: seconds(Date.parse(a.expires) - now) }), cls: () => "num" },
      { label: "", value: approvalActions },
    ], pending, "Nothing is waiting for approval.", "id")];
  if (settled.length > 0) {
    nodes.push(el("h3", { text: "Recently answered" }), table([
      { label: "Asked", value: (a) => time(a.created) },
      { label: "Who asked", value: (a) => asker(a) },
      { label: "Call", value: (a) => a.server + "." + a.tool },
      { label: "Answer", key: "status", cls: (a) => "decision decision-" + a.status },
      { label: "Scope", key: "scope" },
      { label: "By", key: "decided_by" },
    ], settled, "", "id"));
  }
  for (const [node, id] of [[nodes[0], "approvals-pending"], [nodes[2], "approvals-answered"]]) {
    const tableNode = node && node.querySelector ? node.querySelector("table") : null;
    if (tableNode) tableNode.id = id;
  }
  fill("approvals", ...nodes);
}

function renderAudit() {
  const filter = $("audit-filter").value.trim().toLowerCase();
  const matching = auditRecords.filter((r) => filter === "" || (r.server + "." + r.tool).toLowerCase().includes(filter));
  const shownRecords = matching.slice(-AUDIT_SHOWN).reverse();
  const signature = filter + "|" + shownRecords.map((r) => r.id).join(",");
  if (signature === auditShown) return;
  auditShown = signature;
  $("audit-count").textContent = matching.length + " of the last " + auditRecords.length + " calls" +
    (matching.length > AUDIT_SHOWN ? " (newest " + AUDIT_SHOWN + " shown)" : "");
  fill("audit", table([
    { label: "Time", value: (r) => time(r.time) },
    { label: "Caller", key: "caller" },
    { label: "Call", value: (r) => r.server + "." + r.tool },
    { label: "Arguments", value: (r) => el("code", { text: clip(r.args, 200) }) },
    { label: "Decision", value: (r) => r.decision + (r.decided_by ? " (" + r.decided_by + ")" : ""), cls: (r) => "decision decision-" + r.decision },
    { label: "Rule", key: "rule" },
    { label: "Outcome", key: "outcome", cls: (r) => "outcome-" + r.outcome },
    { label: "Duration", value: (r) => r.duration_ms + " ms", cls: () => "num" },
  ], shownRecords, filter ? "No call of a tool matching “" + filter + "”." : "No tool calls recorded yet.", "id"));
}

async function refreshPolicy() {
  try {
    const [{ approvals }, { records }] = await Promise.all([
      getJson("/admin/policy/approvals"),
      getJson("/admin/policy/audit?limit=" + AUDIT_LIMIT),
    ]);
    renderApprovals(approvals);
    auditRecords = records;
    renderAudit();
  } catch (error) {
    const text = error.status === 404
      ? "No server here runs the policy guard."
      : "Cannot read the policy: " + error.message;
    approvalsShown = auditShown = "";
    fill("approvals", el("p", { class: error.status === 404 ? "empty" : "err", text }));
    fill("audit", el("p", { class: error.status === 404 ? "empty" : "err", text }));
  }
}

$("audit-filter").addEventListener("input", renderAudit);
$("audit-form").addEventListener("submit", (event) => event.preventDefault());
`;
