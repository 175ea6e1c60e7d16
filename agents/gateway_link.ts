// Agents reach tools only through the gateway, over the kit's Peer direct
// link (handed in by cli/) bound to the agent's identity ({agent: <name>}):
// every call passes the gateway's validation, audit and limits, and memory's
// own-namespace rule.

import { messageOf } from "../platform/errors.ts";
import type { Tool } from "../platform/mcp_sdk.ts";
import type { DirectLink, LinkedCallOptions, Peer } from "../tools/kit/mod.ts";
import { originOf } from "../tools/kit/tool_names.ts";
import type { ModelTool } from "./model.ts";

export interface ToolOutcome {
  text: string;
  isError: boolean;
  /** The result's structuredContent, when the tool gave one (the same data as `text`). */
  structured?: unknown;
}

/** The gateway as agents see it. */
export interface ToolGateway {
  /** Whether the gateway runs (its tools can be listed and called). */
  running(): boolean;
  /** Every tool the gateway lists for `agent`, by gateway name. */
  listTools(agent: string): Promise<ModelTool[]>;
  callTool(
    agent: string,
    name: string,
    args: Record<string, unknown>,
    /** `onProgress`: what the call says while it runs (e.g. that it waits for a person's approval). */
    options: LinkedCallOptions,
  ): Promise<ToolOutcome>;
  /** Drops the link of an agent (deleted). */
  forget(agent: string): Promise<void>;
  close(): Promise<void>;
}

/** The gateway as a peer in this process, one direct link per agent name. */
export class GatewayLink implements ToolGateway {
  /** One link per agent: "approve for the session" lasts as long. */
  readonly #links = new Map<string, DirectLink>();

  /** `peer` is undefined when the daemon does not run the gateway. */
  constructor(private readonly peer: Peer | undefined) {}

  running(): boolean {
    return this.peer?.phase() === "running";
  }

  /**
   * Asked of the gateway each time (in process, cheap): a list kept here would
   * miss servers registered through another daemon sharing the store. The
   * list does not depend on the caller.
   */
  async listTools(_agent: string): Promise<ModelTool[]> {
    return (await this.#peer().listTools()).map(modelToolOf);
  }

  async callTool(
    agent: string,
    name: string,
    args: Record<string, unknown>,
    options: LinkedCallOptions,
  ): Promise<ToolOutcome> {
    const peer = this.#peer();
    let link = this.#links.get(agent);
    if (link === undefined) {
      link = peer.link({ agent });
      this.#links.set(agent, link);
    }
    const result = await link.callTool(name, args, options);
    const blocks = Array.isArray(result.content) ? result.content : [];
    const parts: string[] = [];
    for (const block of blocks) parts.push(blockText(block));
    if (parts.length === 0 && result.structuredContent !== undefined) {
      parts.push(JSON.stringify(result.structuredContent));
    }
    return {
      text: parts.join("\n"),
      isError: result.isError === true,
      structured: result.structuredContent,
    };
  }

  forget(agent: string): Promise<void> {
    this.#links.delete(agent);
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.#links.clear();
    return Promise.resolve();
  }

  /** The running gateway, or GatewayUnavailable. */
  #peer(): Peer {
    const peer = this.peer;
    if (peer === undefined || !this.running()) {
      throw new GatewayUnavailable(peer);
    }
    return peer;
  }
}

export class GatewayUnavailable extends Error {
  override name = "GatewayUnavailable";
  constructor(peer: Peer | undefined) {
    const error = peer?.error();
    super(
      peer === undefined
        ? "The gateway is not running in this daemon (add it to `servers`), so agents have no tools"
        : `The gateway is not running (phase ${peer.phase()}${
          error ? `: ${error}` : ""
        }); see /health`,
    );
  }
}

/**
 * The gateway hands out the same listing objects until its catalog changes,
 * so each turn reuses their model form instead of copying 30-odd tools.
 * Shared between turns: read-only.
 */
const modelTools = new WeakMap<Tool, ModelTool>();

function modelToolOf(tool: Tool): ModelTool {
  let model = modelTools.get(tool);
  if (model === undefined) {
    model = {
      name: tool.name,
      description: tool.description ?? tool.title ?? tool.name,
      parameters: { ...tool.inputSchema },
      origin: originOf(tool),
    };
    modelTools.set(tool, model);
  }
  return model;
}

function blockText(block: unknown): string {
  if (typeof block !== "object" || block === null) return String(block);
  const type = Reflect.get(block, "type");
  if (type === "text") return String(Reflect.get(block, "text") ?? "");
  if (type === "image" || type === "audio") {
    const data = Reflect.get(block, "data");
    const size = typeof data === "string" ? Math.floor(data.length * 3 / 4) : 0;
    return `[${type}: ${Reflect.get(block, "mimeType")}, ${size} bytes]`;
  }
  if (type === "resource") {
    const resource = Reflect.get(block, "resource");
    const text = typeof resource === "object" && resource !== null
      ? Reflect.get(resource, "text")
      : undefined;
    return typeof text === "string" ? text : `[resource ${safeJson(resource)}]`;
  }
  if (type === "resource_link") {
    return `[resource link ${Reflect.get(block, "uri")}]`;
  }
  return safeJson(block);
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch (error) {
    return `[unprintable: ${messageOf(error)}]`;
  }
}
