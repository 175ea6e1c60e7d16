// Agents reach tools only as MCP clients of the gateway, over the kit's Peer
// link (handed in by cli/) bound to the agent's identity ({agent: <name>}):
// every call passes the gateway's validation, audit and limits, and memory's
// own-namespace rule.

import { messageOf } from "../platform/errors.ts";
import { Client, type Tool } from "../platform/mcp_sdk.ts";
import { VERSION } from "../platform/version.ts";
import type { DirectLink, LinkedCallOptions, Peer } from "../tools/kit/mod.ts";
import type { ModelTool } from "./model.ts";

export interface ToolOutcome {
  text: string;
  isError: boolean;
}

/** The parts of a tools/call result a turn reads. */
interface CallAnswer {
  [key: string]: unknown;
  content?: unknown;
  structuredContent?: unknown;
  isError?: unknown;
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

/** The gateway as a peer in this process, one cached MCP client per agent name. */
export class GatewayLink implements ToolGateway {
  readonly #clients = new Map<string, Promise<Client>>();
  /** One link per agent, as one client per agent: "approve for the session" lasts as long. */
  readonly #links = new Map<string, DirectLink>();

  /** `peer` is undefined when the daemon does not run the gateway. */
  constructor(private readonly peer: Peer | undefined) {}

  running(): boolean {
    return this.peer?.phase() === "running";
  }

  /**
   * Asked of the gateway each time (in process, cheap): a list kept here would
   * miss servers registered through another daemon sharing the store.
   */
  async listTools(agent: string): Promise<ModelTool[]> {
    const peer = this.peer;
    if (peer?.listTools !== undefined) {
      // The list does not depend on the caller; in process it needs no client.
      if (!this.running()) throw new GatewayUnavailable(peer);
      return (await peer.listTools()).map(modelToolOf);
    }
    const client = await this.#client(agent);
    const tools: ModelTool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined);
      tools.push(...page.tools.map(modelToolOf));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return tools;
  }

  async callTool(
    agent: string,
    name: string,
    args: Record<string, unknown>,
    options: LinkedCallOptions,
  ): Promise<ToolOutcome> {
    const result = await this.#call(agent, name, args, options);
    const blocks = Array.isArray(result.content) ? result.content : [];
    const parts: string[] = [];
    for (const block of blocks) parts.push(blockText(block));
    if (parts.length === 0 && result.structuredContent !== undefined) {
      parts.push(JSON.stringify(result.structuredContent));
    }
    return { text: parts.join("\n"), isError: result.isError === true };
  }

  /** In process through the kit's direct link when the peer offers one; else as an MCP client. */
  async #call(
    agent: string,
    name: string,
    args: Record<string, unknown>,
    options: LinkedCallOptions,
  ): Promise<CallAnswer> {
    const peer = this.peer;
    if (peer?.link !== undefined) {
      if (!this.running()) throw new GatewayUnavailable(peer);
      let link = this.#links.get(agent);
      if (link === undefined) {
        link = peer.link({ agent });
        this.#links.set(agent, link);
      }
      return await link.callTool(name, args, options);
    }
    const client = await this.#client(agent);
    const onProgress = options.onProgress;
    return await client.callTool(
      { name, arguments: args },
      undefined,
      {
        signal: options.signal,
        timeout: options.timeoutMs,
        onprogress: onProgress && ((progress) => {
          if (progress.message) onProgress(progress.message);
        }),
      },
    );
  }

  async forget(agent: string): Promise<void> {
    this.#links.delete(agent);
    const pending = this.#clients.get(agent);
    this.#clients.delete(agent);
    await pending?.then((client) => client.close()).catch(() => {});
  }

  async close(): Promise<void> {
    const all = [...this.#clients.keys()];
    await Promise.all(all.map((agent) => this.forget(agent)));
  }

  #client(agent: string): Promise<Client> {
    const peer = this.peer;
    if (peer === undefined || !this.running()) {
      return Promise.reject(new GatewayUnavailable(peer));
    }
    let pending = this.#clients.get(agent);
    if (!pending) {
      pending = peer.connect({ agent }).then(async (transport) => {
        const client = new Client({
          name: `agentd-agent-${agent}`,
          version: VERSION,
        });
        await client.connect(transport);
        return client;
      });
      pending.catch(() => this.#clients.delete(agent));
      this.#clients.set(agent, pending);
    }
    return pending;
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

function modelToolOf(tool: Tool): ModelTool {
  return {
    name: tool.name,
    description: tool.description ?? tool.title ?? tool.name,
    parameters: { ...tool.inputSchema },
  };
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
