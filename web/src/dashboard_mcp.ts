// MCP calls from the page: one session per server endpoint (/mcp/<server>),
// re-initialised when the daemon answers 404, and the panels built on them:
// Platform connections (platform-auth) and memory search.

/// <reference lib="dom" />

import {
  byId,
  clip,
  el,
  errorText,
  fill,
  getHealth,
  type Health,
  HttpFailure,
  messageOf,
  sseEvents,
  statusOf,
  table,
  time,
} from "./dom.ts";

type RpcMessage = {
  jsonrpc: "2.0";
  id?: number;
  method: string;
  params?: Record<string, unknown>;
};
type RpcReply = {
  id?: number;
  result?: ToolResult;
  error?: { message: string };
};
type ToolResult = {
  content?: { text?: string }[];
  isError?: boolean;
  structuredContent?: unknown;
};

const mcpSessions = new Map<string, string>();
let mcpId = 0;

async function mcpPost(
  server: string,
  body: RpcMessage,
): Promise<RpcReply | null> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
  };
  const known = mcpSessions.get(server);
  if (known) headers["mcp-session-id"] = known;
  const response = await fetch("/mcp/" + server, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
  });
  if (!response.ok) {
    throw new HttpFailure(
      "MCP: HTTP " + response.status + " " + (await errorText(response)),
      response.status,
    );
  }
  const session = response.headers.get("mcp-session-id");
  if (session) mcpSessions.set(server, session);
  if (body.id === undefined) return null;
  const type = response.headers.get("content-type") || "";
  if (!type.includes("text/event-stream")) return await response.json();
  for await (const { data } of sseEvents<RpcReply>(response)) {
    if (data.id === body.id) return data;
  }
  throw new Error("MCP: no answer");
}

async function mcpCall(
  server: string,
  method: string,
  params: Record<string, unknown>,
): Promise<ToolResult> {
  const reply = await mcpPost(server, {
    jsonrpc: "2.0",
    id: ++mcpId,
    method,
    params,
  });
  if (reply === null) throw new Error("MCP: no answer");
  if (reply.error) throw new Error(reply.error.message);
  return reply.result ?? {};
}

/** A tool's JSON result (structuredContent, else its text parsed); throws its error text. */
async function callTool<T>(
  server: string,
  name: string,
  args: Record<string, unknown>,
): Promise<T> {
  for (let attempt = 0;; attempt++) {
    try {
      if (!mcpSessions.has(server)) {
        await mcpCall(server, "initialize", {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "agentd-dashboard", version: "1" },
        });
        await mcpPost(server, {
          jsonrpc: "2.0",
          method: "notifications/initialized",
        });
      }
      const result = await mcpCall(server, "tools/call", {
        name,
        arguments: args,
      });
      const text = (result.content || []).map((c) => c.text || "").join("");
      if (result.isError) throw new Error(text);
      return result.structuredContent || JSON.parse(text);
    } catch (error) {
      if (statusOf(error) !== 404 || attempt > 0) throw error;
      mcpSessions.delete(server); // the session expired: start a new one
    }
  }
}

type SearchHit = { key: string; value: unknown; score: number };

async function searchMemory(
  namespace: string,
  query: string,
): Promise<{ hits: SearchHit[]; mode: string }> {
  return await callTool("memory", "search_memory", {
    namespace,
    query,
    limit: 10,
  });
}

type Platform = {
  platform: string;
  grant: string;
  status: string;
  expires_at?: string | null;
};

type Flow = {
  authorization_url?: string;
  verification_uri_complete?: string;
  verification_uri?: string;
  user_code?: string;
};

/**
 * Platform connections: platform-auth's list_platforms; Connect opens the
 * provider's consent page (authenticate), Revoke revokes at the provider.
 */
export async function refreshPlatforms(health: Health): Promise<void> {
  if (
    !health.servers["platform-auth"] ||
    // Not loaded yet: listing its platforms loads it.
    !["running", "not_loaded"].includes(health.servers["platform-auth"].phase)
  ) {
    fill(
      "platforms",
      el("p", { class: "empty", text: "Platform auth is not running." }),
    );
    return;
  }
  try {
    const { platforms } = await callTool<{ platforms: Platform[] }>(
      "platform-auth",
      "list_platforms",
      {},
    );
    fill(
      "platforms",
      table<Platform>(
        [
          { label: "Platform", key: "platform" },
          { label: "Grant", key: "grant" },
          { label: "Status", key: "status", cls: (p) => "state-" + p.status },
          { label: "Expires", value: (p) => time(p.expires_at) },
          { label: "", value: (p) => platformActions(p) },
        ],
        platforms,
        "No platforms yet: add one with the add_platform tool",
        "platform",
      ),
    );
  } catch (error) {
    fill(
      "platforms",
      el("p", {
        class: "err",
        text: "Cannot list platforms: " + messageOf(error),
      }),
    );
  }
}

function platformActions(platform: Platform): HTMLElement {
  const box = el("span", { class: "actions" });
  const state = byId("platforms-state", HTMLElement);
  const act = async (
    button: HTMLButtonElement,
    run: () => Promise<unknown>,
  ) => {
    button.disabled = true;
    state.textContent = "";
    try {
      await run();
    } catch (error) {
      state.textContent = platform.platform + ": " + messageOf(error);
    } finally {
      button.disabled = false;
      refreshPlatforms(
        await getHealth().catch((): Health => ({
          status: "",
          uptime_s: 0,
          servers: {},
        })),
      );
    }
  };
  if (platform.grant !== "api_key" && platform.grant !== "client_credentials") {
    const connect = button("connect", "Connect");
    connect.addEventListener("click", () => {
      // Opened inside the click (a window opened after an await is blocked as a popup).
      const consent = globalThis.open("about:blank", "_blank");
      if (consent) consent.opener = null;
      act(connect, async () => {
        let flow: Flow;
        try {
          flow = await callTool<Flow>("platform-auth", "authenticate", {
            platform: platform.platform,
            method: "oauth",
          });
        } catch (error) {
          if (consent) consent.close();
          throw error;
        }
        const url = flow.authorization_url || flow.verification_uri_complete ||
          flow.verification_uri;
        if (consent && url) consent.location.href = url;
        else if (consent) consent.close();
        state.textContent = flow.user_code
          ? platform.platform + ": enter code " + flow.user_code + " at " +
            flow.verification_uri
          : platform.platform + ": consent in the window that opened";
      });
    });
    box.append(connect);
  }
  if (platform.status === "active") {
    const revoke = button("revoke", "Revoke");
    revoke.addEventListener("click", () =>
      act(
        revoke,
        () =>
          callTool("platform-auth", "revoke_token", {
            platform: platform.platform,
          }),
      ));
    box.append(" ", revoke);
  }
  return box;
}

function button(action: string, text: string): HTMLButtonElement {
  const node = document.createElement("button");
  node.type = "button";
  node.dataset.action = action;
  node.textContent = text;
  return node;
}

export async function onMemorySearch(event: Event): Promise<void> {
  event.preventDefault();
  const out = byId("memory-results", HTMLElement);
  const namespace = byId("memory-namespace", HTMLSelectElement).value;
  const query = byId("memory-query", HTMLInputElement).value.trim();
  if (!namespace || !query) return;
  out.replaceChildren(el("p", { class: "empty", text: "Searching…" }));
  try {
    const found = await searchMemory(namespace, query);
    out.replaceChildren(
      el("p", {
        text: found.hits.length + " hit(s) in " + namespace + " (" +
          found.mode + ")",
      }),
      table<SearchHit>(
        [
          { label: "Key", key: "key" },
          { label: "Value", value: (h) => clip(h.value, 200) },
          {
            label: "Score",
            value: (h) => Number(h.score).toFixed(3),
            cls: () => "num",
          },
        ],
        found.hits,
        "Nothing matched",
        "key",
      ),
    );
  } catch (error) {
    out.replaceChildren(
      el("p", { class: "err", text: "Search failed: " + messageOf(error) }),
    );
  }
}
