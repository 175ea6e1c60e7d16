// Routing: a call goes to one healthy replica of a group (round robin or
// least in flight), rerouted past unreachable ones; a broadcast goes to all.

import { type CallToolResult, McpError } from "../../platform/mcp_sdk_types.ts";
import { messageOf } from "../../platform/errors.ts";
import type { Logger } from "../../platform/log.ts";
import type { JsonValue } from "../../platform/store/mod.ts";
import { type CallContext, errorResult, ToolError } from "../kit/mod.ts";
import type { GatewayConfig } from "./config.ts";
import { gatewayName } from "../kit/tool_names.ts";
import {
  byName,
  CallRefused,
  type Upstream,
  UpstreamUnreachable,
} from "./upstream.ts";

/** The `_meta` key of a routed result naming the upstream that answered. */
const UPSTREAM_META = "io.agentd/upstream";

/** Upstreams by replica group, over the gateway's live upstream map. */
export class ReplicaGroups {
  readonly #upstreams: ReadonlyMap<string, Upstream>;
  readonly #config: GatewayConfig;
  readonly #log: Logger;
  readonly #turn = new Map<string, number>();

  constructor(
    upstreams: ReadonlyMap<string, Upstream>,
    options: { config: GatewayConfig; log: Logger },
  ) {
    this.#upstreams = upstreams;
    this.#config = options.config;
    this.#log = options.log;
  }

  members(group: string): Upstream[] {
    return [...this.#upstreams.values()].filter((upstream) =>
      upstream.group === group
    );
  }

  /** `route_tool_call`: `server` is an upstream name or a replica group. */
  route(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    call: CallContext,
  ): Promise<CallToolResult> {
    const named = this.#upstreams.get(server);
    const group = named?.group ?? server;
    if (this.members(group).length === 0) {
      throw new ToolError(
        `No upstream or group "${server}". Known: ${
          namesOf(this.#upstreams).join(", ")
        }`,
      );
    }
    return this.call(group, tool, args, call, named);
  }

  /** Calls `tool` on a healthy member of `group`, `preferred` first; the next one when one is unreachable. */
  async call(
    group: string,
    tool: string,
    args: Record<string, unknown>,
    call: CallContext,
    preferred?: Upstream,
  ): Promise<CallToolResult> {
    if (hiddenIn(this.#config, group, tool)) {
      throw new ToolError(
        `Cannot call ${tool} on "${group}": the gateway's tool_overrides hide it.`,
      );
    }
    const tried = new Set<Upstream>();
    // The upstream the call was meant for, when another one must take it:
    // the one asked for by name is down, or the last pick did not answer.
    let passed: { upstream: Upstream; reason: string } | undefined =
      preferred && preferred.state !== "healthy"
        ? { upstream: preferred, reason: preferred.state }
        : undefined;
    for (;;) {
      const upstream = this.#pick(group, tool, preferred, tried);
      if (!upstream) throw new ToolError(this.#unavailable(group, tool));
      if (passed && passed.upstream !== upstream) {
        this.#rerouted(passed.upstream, upstream, tool, passed.reason);
      }
      passed = undefined;
      try {
        const result = await upstream.call(tool, args, call);
        result._meta = { ...result._meta, [UPSTREAM_META]: upstream.name };
        return result;
      } catch (error) {
        if (error instanceof UpstreamUnreachable) {
          tried.add(upstream);
          passed = { upstream, reason: error.message };
          continue;
        }
        // A refusal is the answer: another replica is not asked instead.
        if (error instanceof CallRefused) {
          return {
            ...error.result,
            _meta: { ...error.result._meta, [UPSTREAM_META]: upstream.name },
          };
        }
        const message = error instanceof McpError
          ? error.message
          : messageOf(error);
        return errorResult(
          `${tool} on upstream "${upstream.name}" failed: ${message}`,
        );
      }
    }
  }

  /** Counts (for /metrics) and logs a call sent past `from`. */
  #rerouted(from: Upstream, to: Upstream, tool: string, reason: string): void {
    from.reroutes++;
    this.#log.warn("reroute", {
      group: from.group,
      tool,
      from: from.name,
      to: to.name,
      error: reason,
    });
  }

  #pick(
    group: string,
    tool: string,
    preferred: Upstream | undefined,
    tried: ReadonlySet<Upstream>,
  ): Upstream | undefined {
    const ready = this.members(group).filter((upstream) =>
      upstream.state === "healthy" && upstream.has(tool) &&
      !tried.has(upstream)
    ).sort(byName);
    if (ready.length === 0) return undefined;
    if (preferred && ready.includes(preferred)) return preferred;
    const turn = this.#turn.get(group) ?? 0;
    this.#turn.set(group, turn + 1);
    if (this.#config.balance === "least_in_flight") {
      const least = Math.min(...ready.map((upstream) => upstream.inFlight));
      const idle = ready.filter((upstream) => upstream.inFlight === least);
      return idle[turn % idle.length];
    }
    return ready[turn % ready.length];
  }

  /** Why a call cannot go anywhere: which upstream is down, since when, and why. */
  #unavailable(group: string, tool: string): string {
    const members = this.members(group);
    const having = members.filter((upstream) => upstream.has(tool));
    if (having.length === 0) {
      const known = [
        ...new Set(
          members.flatMap((upstream) => upstream.tools.map((t) => t.name)),
        ),
      ].sort();
      return `Unknown tool "${tool}" on "${group}". Its tools: ${
        known.length ? known.join(", ") : "none known yet"
      }`;
    }
    const down = having.map((upstream) =>
      `"${upstream.name}" is ${upstream.state} since ${
        new Date(upstream.since).toISOString()
      }${upstream.lastError ? ` (${upstream.lastError})` : ""}`
    );
    const replicas = having.length > 1
      ? `no healthy replica in group "${group}"`
      : "no replica is registered";
    return `Cannot call ${tool}: upstream ${down.join("; ")}; ${replicas}.`;
  }
}

/**
 * `broadcast_tool_call`: every healthy upstream with the tool, in parallel;
 * one result each. Each call is judged as the upstream it reaches
 * (Upstream.call); a refused one is reported with status `refused`.
 */
export async function broadcast(
  upstreams: ReadonlyMap<string, Upstream>,
  request: {
    tool: string;
    args: Record<string, unknown>;
    call: CallContext;
    /** Each upstream's own limit: a slow one does not hold up the others. */
    timeoutMs: number;
    /** Its `tool_overrides`: a hidden tool is not broadcast to. */
    config: GatewayConfig;
  },
): Promise<CallToolResult> {
  const { tool, args, call, timeoutMs } = request;
  const having = [...upstreams.values()]
    .filter((upstream) =>
      upstream.has(tool) && !hiddenIn(request.config, upstream.group, tool)
    )
    .sort(byName);
  if (having.length === 0) {
    return errorResult(
      `No upstream has a tool "${tool}". Tools come from: ${
        namesOf(upstreams).join(", ")
      }`,
    );
  }
  const results = await Promise.all(having.map(async (upstream) => {
    const started = performance.now();
    const base = { server: upstream.name, group: upstream.group };
    if (upstream.state !== "healthy") {
      return {
        ...base,
        status: "down",
        error: `${upstream.state} since ${
          new Date(upstream.since).toISOString()
        }${upstream.lastError ? ` (${upstream.lastError})` : ""}`,
        duration_ms: 0,
      };
    }
    // A timer cleared when the call ends: AbortSignal.timeout would keep the
    // call's signal and the SDK's listeners alive for the whole timeout.
    const deadline = new AbortController();
    const timer = setTimeout(
      () => deadline.abort(new DOMException("timed out", "TimeoutError")),
      timeoutMs,
    );
    const signal = AbortSignal.any([call.signal, deadline.signal]);
    try {
      const result = await upstream.call(tool, args, { ...call, signal });
      return {
        ...base,
        status: result.isError ? "error" : "ok",
        content: result.content as JsonValue,
        ...(result.structuredContent
          ? { structured_content: result.structuredContent as JsonValue }
          : {}),
        duration_ms: Math.round(performance.now() - started),
      };
    } catch (error) {
      if (error instanceof CallRefused) {
        return {
          ...base,
          status: "refused",
          error: error.message,
          duration_ms: Math.round(performance.now() - started),
        };
      }
      const timedOut = signal.aborted && !call.signal.aborted;
      return {
        ...base,
        status: timedOut ? "timeout" : "error",
        error: timedOut ? `timed out after ${timeoutMs} ms` : messageOf(error),
        duration_ms: Math.round(performance.now() - started),
      };
    } finally {
      clearTimeout(timer);
    }
  }));
  const succeeded = results.filter((result) => result.status === "ok").length;
  const body = {
    tool,
    succeeded,
    failed: results.length - succeeded,
    results,
  };
  return {
    content: [{ type: "text", text: JSON.stringify(body, null, 2) }],
    structuredContent: body,
    isError: succeeded === 0,
  };
}

/** Upstream names in code-unit order, for messages listing what is known. */
export function namesOf(upstreams: ReadonlyMap<string, Upstream>): string[] {
  return [...upstreams.keys()].sort();
}

/**
 * A tool the operator hid (`tool_overrides.<group>__<tool>.hidden`) is not
 * callable through the gateway in any way: by name, routed or broadcast.
 */
function hiddenIn(config: GatewayConfig, group: string, tool: string): boolean {
  return config.tool_overrides[gatewayName(group, tool).name]?.hidden === true;
}
