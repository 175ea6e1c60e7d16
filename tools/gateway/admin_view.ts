// What `/admin` shows: the gateway's upstreams, their health and the tool
// catalog, as the gateway's typed view and as its section of the page.

import type { AdminColumn, AdminSection } from "../kit/admin.ts";

export type UpstreamState = "connecting" | "healthy" | "unhealthy" | "stopped";

export interface AdminServer {
  name: string;
  /** Replica group; the prefix of its tools. Equals `name` unless configured. */
  group: string;
  /** `discovered`: added by auto-discovery; it leaves when no longer found. */
  source: "builtin" | "config" | "registered" | "discovered";
  transport: "in-process" | "http" | "stdio";
  /** URL, command line (without env), or `in-process`; null for an agent-bound viewer (views.ts). */
  target: string | null;
  /** Whether headers or a token are sent to it (never which). */
  credentials: boolean;
  state: UpstreamState;
  /** ISO time the state began. */
  since: string;
  last_check: string | null;
  latency_ms: number | null;
  last_error: string | null;
  calls: number;
  errors: number;
  /** errors / calls, 0 when no calls. */
  error_rate: number;
  in_flight: number;
  /** Tools exposed (after the registration's `tools` filter). */
  tools: number;
  /** Process id of a stdio upstream while it runs. */
  pid: number | null;
  restarts: number;
  /** Calls meant for this upstream that a replica took. */
  reroutes: number;
}

export interface AdminTool {
  /** The name clients call at /mcp: `<group>__<tool>`, shortened past 64 characters. */
  name: string;
  group: string;
  tool: string;
  /** True when `name` was shortened to fit 64 characters. */
  shortened: boolean;
  description: string;
}

export interface AdminView {
  generated_at: string;
  version: string;
  health_interval_ms: number;
  balance: "round_robin" | "least_in_flight";
  servers: AdminServer[];
  tools: AdminTool[];
}

/** The gateway's `/admin` section: a summary, the servers and the tool catalog. */
export function adminSection(view: AdminView): AdminSection {
  const healthy = view.servers.filter((s) => s.state === "healthy").length;
  return {
    title: "MCP gateway",
    fields: [
      {
        key: "balance",
        label: "Balance",
        value: view.balance,
        format: "words",
      },
      {
        key: "health_interval_ms",
        label: "Health check every",
        value: view.health_interval_ms,
        format: "duration",
      },
      {
        key: "servers",
        label: "Servers",
        value: `${healthy} of ${view.servers.length} healthy`,
      },
      {
        key: "tools",
        label: "Tools",
        value: view.tools.length,
        format: "number",
      },
    ],
    tables: [
      {
        id: "servers",
        title: "Servers",
        row_attribute: "server",
        row_key: "name",
        columns: SERVER_COLUMNS,
        rows: view.servers.map((server) => ({ ...server })),
        empty: "No servers configured.",
      },
      {
        id: "tools",
        title: "Tools",
        row_attribute: "tool",
        row_key: "name",
        columns: TOOL_COLUMNS,
        rows: view.tools.map((tool) => ({ ...tool })),
        empty: "No tools exposed.",
      },
    ],
  };
}

const SERVER_COLUMNS: AdminColumn[] = [
  { key: "name", label: "Server" },
  { key: "group", label: "Group" },
  { key: "source", label: "Source" },
  { key: "transport", label: "Transport" },
  { key: "target", label: "Target", format: "code" },
  { key: "credentials", label: "Credentials", format: "flag" },
  { key: "state", label: "State", format: "state" },
  { key: "since", label: "Since", format: "time" },
  { key: "last_check", label: "Last check", format: "time" },
  { key: "latency_ms", label: "Latency", format: "duration" },
  { key: "calls", label: "Calls", format: "number" },
  { key: "errors", label: "Errors", format: "number" },
  { key: "error_rate", label: "Error rate", format: "percent" },
  { key: "in_flight", label: "In flight", format: "number" },
  { key: "tools", label: "Tools", format: "number" },
  { key: "pid", label: "PID", format: "id" },
  { key: "restarts", label: "Restarts", format: "number" },
  { key: "reroutes", label: "Rerouted", format: "number" },
  { key: "last_error", label: "Last error", format: "error" },
];

const TOOL_COLUMNS: AdminColumn[] = [
  { key: "name", label: "Gateway name", format: "code" },
  { key: "shortened", label: "Shortened", format: "flag" },
  { key: "group", label: "Group" },
  { key: "tool", label: "Upstream tool", format: "code" },
  { key: "description", label: "Description" },
];
