// What `/admin` shows: the gateway's upstreams, their health and the tool
// catalog. The same object is the JSON answer and the HTML page's data.

export type UpstreamState = "connecting" | "healthy" | "unhealthy" | "stopped";

export interface AdminServer {
  name: string;
  /** Replica group; the prefix of its tools. Equals `name` unless configured. */
  group: string;
  source: "builtin" | "config" | "registered";
  transport: "in-process" | "http" | "stdio";
  /** URL, command line (without env), or `in-process`. */
  target: string;
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
