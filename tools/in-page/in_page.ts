// The in-page server's context: the relay to the extension plus the config,
// and one way to run an extension action as a tool call.

import type { JsonValue } from "../../platform/store/mod.ts";
import type { Logger } from "../../platform/log.ts";
import { messageOf } from "../../platform/errors.ts";
import {
  type CallContext,
  json,
  ToolError,
  type ToolResult,
} from "../kit/mod.ts";
import type { InPageConfig } from "./config.ts";
import { ExtensionRelay } from "./extension_relay.ts";
import type { DaemonOrigin } from "../../platform/daemon_origin.ts";

export class InPage {
  readonly relay: ExtensionRelay;
  readonly config: InPageConfig;
  readonly #log: Logger;
  /** The daemon's own origin, which no tool may read or act in (platform/daemon_origin.ts). */
  readonly ownOrigin: () => DaemonOrigin;

  constructor(
    config: InPageConfig,
    options: { dataDir: string; log: Logger; ownOrigin: () => DaemonOrigin },
  ) {
    this.config = config;
    this.#log = options.log;
    this.ownOrigin = options.ownOrigin;
    this.relay = new ExtensionRelay({
      dataDir: options.dataDir,
      port: config.relay_port,
      allowedExtensionIds: config.extension_ids,
      log: options.log,
    });
  }

  /** Runs `action` in the extension; its object result becomes a JSON tool result. */
  async act(
    call: CallContext,
    tool: string,
    action: string,
    params: { [key: string]: JsonValue | undefined },
    options: { extraTimeoutMs?: number } = {},
  ): Promise<ToolResult> {
    const clean: { [key: string]: JsonValue } = {};
    for (const [key, value] of Object.entries(params)) {
      if (value !== undefined) clean[key] = value;
    }
    // The extension refuses tabs on this origin, checked in the page itself.
    const daemon = this.ownOrigin();
    clean.daemon = { ports: [...daemon.ports], hosts: [...daemon.hosts] };
    const started = performance.now();
    try {
      const value = await this.relay.call(action, clean, {
        timeoutMs: this.config.call_timeout_ms + (options.extraTimeoutMs ?? 0),
        waitMs: this.config.connect_wait_ms,
        signal: call.signal,
      });
      this.#log.info("tool_call", {
        tool,
        tab_id: clean.tab_id ?? "active",
        duration_ms: Math.round(performance.now() - started),
      });
      return json(
        typeof value === "object" && value !== null && !Array.isArray(value)
          ? value
          : { value },
      );
    } catch (error) {
      this.#log.warn("tool_failed", {
        tool,
        tab_id: clean.tab_id ?? "active",
        error: messageOf(error),
        duration_ms: Math.round(performance.now() - started),
      });
      throw new ToolError(`${tool} failed: ${messageOf(error)}`);
    }
  }

  health(): { [key: string]: JsonValue } {
    const relay = this.relay.health();
    const connected = relay.extension === "connected";
    const version = relay.extension_version;
    return {
      status: connected ? "ok" : "waiting",
      // The dashboard's one line for this server: is the extension there.
      summary: connected
        ? `extension connected${
          typeof version === "string" ? ` (v${version})` : ""
        }`
        : `waiting for the extension (relay port ${relay.relay_port})`,
      ...relay,
    };
  }
}

/** The first entries whose JSON fits in `budget` characters. */
export function withinBudget<T>(entries: readonly T[], budget: number): T[] {
  const kept: T[] = [];
  let size = 0;
  for (const entry of entries) {
    size += JSON.stringify(entry).length;
    if (size > budget) break;
    kept.push(entry);
  }
  return kept;
}

export function jsonResult(value: { [key: string]: unknown }): ToolResult {
  const structured: { [key: string]: JsonValue } = JSON.parse(
    JSON.stringify(value),
  );
  return json(structured);
}
