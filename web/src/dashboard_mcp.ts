// The dashboard's MCP calls from the page (one session per server, over the
// servers' /mcp endpoints) and the panels built on them: Platform connections
// and memory search. Spliced into dashboard_script.ts, whose el/table/fill/
// time/clip/sseEvents/errorText/getHealth it uses.

export const MCP_SCRIPT = String
  .raw`// MCP calls from the page: one session per server endpoint (memory search,
// platform connections), re-initialised when the daemon answers 404.
const mcpSessions = new Map();
let mcpId = 0;

async function mcpPost(server, body) {
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  const known = mcpSessions.get(server);
  if (known) headers["mcp-session-id"] = known;
  const response = await fetch("/mcp/" + server, { method: "POST", headers, body: JSON.stringify(body) });
  if (!response.ok) {
    const error = new Error("MCP: HTTP " + response.status + " " + (await errorText(response)));
    error.status = response.status;
    throw error;
  }
  const session = response.headers.get("mcp-session-id");
  if (session) mcpSessions.set(server, session);
  if (body.id === undefined) return null;
  const type = response.headers.get("content-type") || "";
  if (!type.includes("text/event-stream")) return await response.json();
  for await (const { data } of sseEvents(response)) {
    if (data.id === body.id) return data;
  }
  throw new Error("MCP: no answer");
}

async function mcpCall(server, method, params) {
  const reply = await mcpPost(server, { jsonrpc: "2.0", id: ++mcpId, method, params });
  if (reply.error) throw new Error(reply.error.message);
  return reply.result;
}

/** A tool's JSON result (structuredContent, else its text parsed); throws its error text. */
async function callTool(server, name, args) {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      if (!mcpSessions.has(server)) {
        await mcpCall(server, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "agentd-dashboard", version: "1" } });
        await mcpPost(server, { jsonrpc: "2.0", method: "notifications/initialized" });
      }
      const result = await mcpCall(server, "tools/call", { name, arguments: args });
      const text = (result.content || []).map((c) => c.text || "").join("");
      if (result.isError) throw new Error(text);
      return result.structuredContent || JSON.parse(text);
    } catch (error) {
      if (error.status !== 404 || attempt > 0) throw error;
      mcpSessions.delete(server); // the session expired: start a new one
    }
  }
}

async function searchMemory(namespace, query) {
  return await callTool("memory", "search_memory", { namespace, query, limit: 10 });
}

// Platform connections: platform-auth's list_platforms; Connect opens the
// provider's consent page (authenticate), Revoke revokes at the provider.
async function refreshPlatforms(health) {
  if (!health.servers["platform-auth"] || health.servers["platform-auth"].phase !== "running") {
    fill("platforms", el("p", { class: "empty", text: "Platform auth is not running." }));
    return;
  }
  try {
    const { platforms } = await callTool("platform-auth", "list_platforms", {});
    fill("platforms", table([
      { label: "Platform", key: "platform" },
      { label: "Grant", key: "grant" },
      { label: "Status", key: "status", cls: (p) => "state-" + p.status },
      { label: "Expires", value: (p) => time(p.expires_at) },
      { label: "", value: (p) => platformActions(p) },
    ], platforms, "No platforms yet: add one with the add_platform tool", "platform"));
  } catch (error) {
    fill("platforms", el("p", { class: "err", text: "Cannot list platforms: " + error.message }));
  }
}

function platformActions(platform) {
  const box = el("span", { class: "actions" });
  const act = async (button, run) => {
    button.disabled = true;
    $("platforms-state").textContent = "";
    try {
      await run();
    } catch (error) {
      $("platforms-state").textContent = platform.platform + ": " + error.message;
    } finally {
      button.disabled = false;
      refreshPlatforms(await getHealth().catch(() => ({ servers: {} })));
    }
  };
  if (platform.grant !== "api_key" && platform.grant !== "client_credentials") {
    const connect = el("button", { type: "button", "data-action": "connect", text: "Connect" });
    connect.addEventListener("click", () => {
      // Opened inside the click (a window opened after an await is blocked as a popup).
      const consent = window.open("about:blank", "_blank");
      if (consent) consent.opener = null;
      act(connect, async () => {
      let flow;
      try {
        flow = await callTool("platform-auth", "authenticate", { platform: platform.platform, method: "oauth" });
      } catch (error) {
        if (consent) consent.close();
        throw error;
      }
      const url = flow.authorization_url || flow.verification_uri_complete || flow.verification_uri;
      if (consent && url) consent.location.href = url;
      else if (consent) consent.close();
      $("platforms-state").textContent = flow.user_code
        ? platform.platform + ": enter code " + flow.user_code + " at " + flow.verification_uri
        : platform.platform + ": consent in the window that opened";
      });
    });
    box.append(connect);
  }
  if (platform.status === "active") {
    const revoke = el("button", { type: "button", "data-action": "revoke", text: "Revoke" });
    revoke.addEventListener("click", () => act(revoke, () => callTool("platform-auth", "revoke_token", { platform: platform.platform })));
    box.append(" ", revoke);
  }
  return box;
}

async function onMemorySearch(event) {
  event.preventDefault();
  const out = $("memory-results");
  const namespace = $("memory-namespace").value;
  const query = $("memory-query").value.trim();
  if (!namespace || !query) return;
  out.replaceChildren(el("p", { class: "empty", text: "Searching…" }));
  try {
    const found = await searchMemory(namespace, query);
    out.replaceChildren(
      el("p", { text: found.hits.length + " hit(s) in " + namespace + " (" + found.mode + ")" }),
      table([
        { label: "Key", key: "key" },
        { label: "Value", value: (h) => clip(h.value, 200) },
        { label: "Score", value: (h) => Number(h.score).toFixed(3), cls: () => "num" },
      ], found.hits, "Nothing matched", "key"));
  } catch (error) {
    out.replaceChildren(el("p", { class: "err", text: "Search failed: " + error.message }));
  }
}
`;
