// Remote A2A agents: their cards (fetched with a timeout and a size bound)
// and message delivery through @a2a-js/sdk's client (agents/a2a/sdk_client.ts,
// the one import seam of the SDK, loaded on the first message sent).

import { z } from "zod";
import { messageOf } from "../../platform/errors.ts";
import { lazy } from "../../platform/lazy.ts";
import type { JsonValue } from "../../platform/store/mod.ts";
import { type CardSummary, readCard } from "./card.ts";
import type { Answer } from "./sdk_client.ts";

/** A remote agent that cannot be reached or answered badly; `reason` says how. */
export class RemoteAgentError extends Error {
  override name = "RemoteAgentError";
  constructor(readonly address: string, readonly reason: string) {
    super(`Remote agent ${address}: ${reason}`);
  }
}

/** A remote address the config does not allow this daemon to contact. */
export class RemoteAgentForbidden extends RemoteAgentError {
  override name = "RemoteAgentForbidden";
}

export interface RemoteCard extends CardSummary {
  /** Where the card was read. */
  card_url: string;
}

export interface RemoteReply {
  /** The remote agent's name (from its card). */
  agent: string;
  text: string;
  /** The remote task, when the agent answered with one. */
  task_id?: string;
  state?: string;
}

export interface RemoteAgentsOptions {
  fetchFn?: typeof fetch;
  /** Per card request; default 5 s. */
  cardTimeoutMs?: number;
  /** Default 256 KiB. */
  maxCardBytes?: number;
  /** How long a fetched card is reused; default 30 s. */
  cardTtlMs?: number;
  /**
   * Origins that may be contacted besides loopback ones (`*`: any). Callers
   * and models choose addresses, so without this list the daemon could be
   * made to fetch from any host its network reaches.
   */
  allowedOrigins?: readonly string[];
}

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/** True for an `http(s)://` address, which names a remote agent rather than a local one. */
export function isRemoteAddress(ref: string): boolean {
  return /^https?:\/\//i.test(ref.trim());
}

const AGENT_CARD_PATH = "/.well-known/agent-card.json";

export class RemoteAgents {
  #fetch: typeof fetch;
  #cardTimeoutMs: number;
  #maxCardBytes: number;
  #cardTtlMs: number;
  #cards = new Map<string, { card: RemoteCard; expires: number }>();
  #allowed: ReadonlySet<string>;

  constructor(options: RemoteAgentsOptions = {}) {
    const fetchFn = options.fetchFn ?? fetch;
    // Cards and deliveries (sdk_client.ts) both go through this fetch.
    this.#fetch = (input, init) =>
      fetchChecked(fetchFn, (url) => this.#check(url.href, url), input, init);
    this.#cardTimeoutMs = options.cardTimeoutMs ?? 5_000;
    this.#maxCardBytes = options.maxCardBytes ?? 256 * 1024;
    this.#cardTtlMs = options.cardTtlMs ?? 30_000;
    this.#allowed = new Set(
      (options.allowedOrigins ?? []).map((origin) =>
        origin === "*" ? "*" : originOf(origin)
      ),
    );
  }

  /** Throws RemoteAgentForbidden (or RemoteAgentError for a bad URL) unless `address` may be contacted. */
  assertAllowed(address: string): void {
    this.#check(address, parseAddress(address));
  }

  /** Loopback and listed origins only (see `allowedOrigins`). */
  #check(address: string, url: URL): void {
    if (LOOPBACK.test(url.hostname) || this.#allowed.has("*")) return;
    if (this.#allowed.has(url.origin)) return;
    throw new RemoteAgentForbidden(
      address,
      `${url.origin} is not an allowed remote: add it to agents.remote_agents in the config (only loopback addresses are allowed by default)`,
    );
  }

  /**
   * The card of the agent at `address`: the address itself when it names a
   * card (`….json`, `…/card`), else `<address>/.well-known/agent-card.json`,
   * then the same path at the address's origin, if that card lists the
   * address among its interfaces.
   */
  async card(address: string, signal?: AbortSignal): Promise<RemoteCard> {
    const url = parseAddress(address);
    this.#check(address, url);
    const cached = this.#cards.get(url.href);
    if (cached && cached.expires > Date.now()) return cached.card;
    const reasons: string[] = [];
    for (const [index, candidate] of cardUrls(url).entries()) {
      try {
        const raw = await this.#fetchJson(candidate, signal);
        const card = { ...readCard(raw), card_url: candidate.href };
        if (index > 0 && !describes(card, url)) {
          throw new Error(
            `that card describes ${card.endpoint}, not ${url.href}`,
          );
        }
        this.#cards.set(url.href, {
          card,
          expires: Date.now() + this.#cardTtlMs,
        });
        return card;
      } catch (error) {
        if (signal?.aborted || error instanceof RemoteAgentForbidden) {
          throw error; // a redirect to a host not allowed
        }
        reasons.push(`${candidate.href}: ${reasonOf(error)}`);
      }
    }
    throw new RemoteAgentError(
      address,
      `no agent card found (${reasons.join("; ")})`,
    );
  }

  /**
   * Sends one text message and waits for the answer (unless
   * `returnImmediately`). Failed, rejected or canceled remote tasks reject.
   */
  async send(
    address: string,
    message: {
      text: string;
      metadata?: Record<string, JsonValue>;
      /** Keeps one conversation on the receiving agent across messages. */
      contextId?: string;
      returnImmediately?: boolean;
    },
    signal?: AbortSignal,
  ): Promise<RemoteReply> {
    const card = await this.card(address, signal);
    // A card names where to deliver: those addresses must be allowed too.
    for (const { url } of card.interfaces) {
      this.#check(address, parseAddress(url));
    }
    // Outside the try: a module that fails to load is this build's fault, not the remote agent's.
    const { deliver } = await lazy<typeof import("./sdk_client.ts")>(
      "./sdk_client.ts",
      import.meta.url,
    );
    let answer: Answer;
    try {
      answer = await deliver({
        fetchImpl: this.#fetch,
        name: card.name,
        interfaces: card.interfaces,
        text: message.text,
        metadata: message.metadata,
        contextId: message.contextId,
        returnImmediately: message.returnImmediately,
        signal,
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new RemoteAgentError(address, reasonOf(error));
    }
    return replyOf(address, card.name, answer);
  }

  async #fetchJson(url: URL, signal?: AbortSignal): Promise<unknown> {
    const controller = new AbortController();
    const timer = setTimeout(
      () =>
        controller.abort(
          new Error(`no answer within ${this.#cardTimeoutMs} ms`),
        ),
      this.#cardTimeoutMs,
    );
    const onAbort = () => controller.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const response = await this.#fetch(url, {
        headers: { accept: "application/json", "A2A-Version": "1.0" },
        signal: controller.signal,
      });
      if (!response.ok) {
        await response.body?.cancel();
        throw new Error(`HTTP ${response.status}`);
      }
      const text = await readBounded(response, this.#maxCardBytes);
      try {
        return JSON.parse(text);
      } catch {
        throw new Error("the answer is not JSON");
      }
    } catch (error) {
      throw controller.signal.aborted && !signal?.aborted
        ? controller.signal.reason
        : error;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  }
}

const MAX_REDIRECTS = 5;

/**
 * `fetchFn` that follows redirects itself, checking each hop with `check`
 * (the allow-list): left to fetch, a remote could redirect the daemon to a
 * host it may not contact. Redirects of requests with a body are refused,
 * not replayed.
 */
async function fetchChecked(
  fetchFn: typeof fetch,
  check: (url: URL) => void,
  input: string | URL | Request,
  init?: RequestInit,
): Promise<Response> {
  const method = (init?.method ??
    (input instanceof Request ? input.method : "GET")).toUpperCase();
  const headers = init?.headers ??
    (input instanceof Request ? input.headers : undefined);
  let url = new URL(input instanceof Request ? input.url : input);
  let response = await fetchFn(input, { ...init, redirect: "manual" });
  for (let hop = 0;; hop++) {
    const location = response.headers.get("location");
    if (
      response.status < 300 || response.status > 399 || location === null
    ) return response;
    await response.body?.cancel();
    const next = new URL(location, url);
    if (method !== "GET" && method !== "HEAD") {
      throw new Error(
        `${url.href} redirects a ${method} to ${next.href}; agentd does not follow it (give the final address)`,
      );
    }
    if (hop >= MAX_REDIRECTS) {
      throw new Error(`more than ${MAX_REDIRECTS} redirects from ${url.href}`);
    }
    check(next);
    url = next;
    response = await fetchFn(url, {
      ...init,
      method,
      headers,
      redirect: "manual",
    });
  }
}

/** The message with its causes ("fetch failed: … Connection refused"). */
function reasonOf(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && depth < 4; depth++) {
    const message = messageOf(current);
    if (!parts.some((part) => part.includes(message))) parts.push(message);
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join(": ");
}

function originOf(origin: string): string {
  try {
    return new URL(origin).origin;
  } catch {
    return origin;
  }
}

function parseAddress(address: string): URL {
  let url: URL;
  try {
    url = new URL(address.trim());
  } catch {
    throw new RemoteAgentError(address, "not a valid URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new RemoteAgentError(address, "only http and https are supported");
  }
  return url;
}

function cardUrls(address: URL): URL[] {
  const path = address.pathname;
  if (path.endsWith(".json") || path.endsWith("/card")) return [address];
  const below = new URL(path.replace(/\/+$/, "") + AGENT_CARD_PATH, address);
  const atOrigin = new URL(AGENT_CARD_PATH, address);
  return below.href === atOrigin.href ? [below] : [below, atOrigin];
}

/** Whether the origin's card is the one of `address`: the origin itself, or one of the card's interfaces. */
function describes(card: CardSummary, address: URL): boolean {
  const trim = (href: string) => href.replace(/\/+$/, "");
  if (trim(address.pathname) === "") return true;
  return card.interfaces.some((i) => trim(i.url) === trim(address.href));
}

async function readBounded(response: Response, limit: number): Promise<string> {
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > limit) {
    await response.body?.cancel();
    throw new Error(`the card is larger than ${limit} bytes`);
  }
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw new Error(`the card is larger than ${limit} bytes`);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

const partsSchema = z.array(z.object({ text: z.string().optional() }))
  .optional();
const messageJson = z.object({
  role: z.string().optional(),
  parts: partsSchema,
});
const taskJson = z.object({
  id: z.string(),
  status: z.object({
    state: z.string().optional(),
    message: messageJson.optional(),
  }).optional(),
  artifacts: z.array(z.object({ parts: partsSchema })).optional(),
  history: z.array(messageJson).optional(),
});

function textOf(parts: z.infer<typeof partsSchema>): string {
  return (parts ?? []).flatMap((p) => p.text === undefined ? [] : [p.text])
    .join("\n");
}

const FAILED_STATES = new Set([
  "TASK_STATE_FAILED",
  "TASK_STATE_REJECTED",
  "TASK_STATE_CANCELED",
]);

/** The answer's text: the task's artifacts, else its status message, else the last agent message. */
function replyOf(
  address: string,
  agent: string,
  answer: Answer,
): RemoteReply {
  if ("message" in answer) {
    const message = messageJson.parse(answer.message);
    return { agent, text: textOf(message.parts) };
  }
  const task = taskJson.parse(answer.task);
  const state = task.status?.state ?? "TASK_STATE_UNSPECIFIED";
  const statusText = textOf(task.status?.message?.parts);
  if (FAILED_STATES.has(state)) {
    throw new RemoteAgentError(
      address,
      `task ${task.id} ended ${state.replace("TASK_STATE_", "").toLowerCase()}${
        statusText ? `: ${statusText}` : ""
      }`,
    );
  }
  const artifacts = (task.artifacts ?? []).map((a) => textOf(a.parts))
    .filter((t) => t !== "");
  const lastAgent = (task.history ?? []).filter((m) => m.role === "ROLE_AGENT")
    .at(-1);
  const text = artifacts.length > 0
    ? artifacts.join("\n")
    : statusText || textOf(lastAgent?.parts);
  return { agent, text, task_id: task.id, state };
}
