// The stdio front of `agentd mcp <server>`: started by main.ts before the MCP
// SDK, zod, the config and the server's modules load (~0.5 s of a cold
// start), it answers `initialize`, `tools/list` and `ping` from the server's
// generated facts (tools/<id>/tool_listings.ts: SERVER_INFO, SERVER_FACTS,
// PROTOCOL_VERSIONS, TOOL_LISTINGS), exactly as the SDK server would, and
// records every other message. When the real server is ready, `handover()`
// gives its transport the recorded input, then the rest of stdin: the
// buffered `initialize` first (its answer dropped: the client has one),
// then every later message in order except the tools/list and ping requests
// the front answered. Anything else (a tool call, a notification other than
// `initialized`) stops the front: it and everything after it waits for the
// real server, so answers keep their order. A first message that is not
// `initialize`, a line that is not a JSON-RPC message, or a request whose
// params the front cannot vouch the SDK accepts (a tools/list cursor, an
// odd initialize) stops the front at once, unanswered: the real server
// answers it as it would without a front.
// This module imports no npm module, only the kit's icon paths, the stdout
// sink and line framing (tests/cli/mcp_memory_graph_test.ts pins it).

import type {
  Implementation,
  ServerCapabilities,
  Tool,
} from "../platform/mcp_sdk_types.ts";
import type { ProtocolVersions } from "../tools/kit/mod.ts";
import { iconsAt } from "../tools/kit/icons.ts";
import { stdoutSink } from "../platform/stdout.ts";
import { type ByteSink, LineWriter } from "../platform/line_frames.ts";

/**
 * The servers whose `initialize` and `tools/list` answers are fixed by their
 * generated facts: no run-time tools (the gateway's listing depends on its
 * upstreams and on the client), and no listing that config changes.
 * tests/cli/stdio_front_test.ts deep-equals the front's answers with the
 * real server's for each.
 */
export const FRONT_SERVERS: readonly string[] = [
  "memory",
  "browser-automation",
  "desktop-control",
  "extension-bridge",
  "in-page",
  "platform-auth",
];

/** What a server's generated tool_listings.ts gives the front. */
export interface FrontFacts {
  TOOL_LISTINGS: readonly Tool[];
  SERVER_FACTS: {
    instructions?: string;
    capabilities: ServerCapabilities;
    aggregates: boolean;
  };
  SERVER_INFO: Implementation;
  PROTOCOL_VERSIONS: ProtocolVersions;
}

/** What the real server's stdio transport takes over. */
export interface Handover {
  /** The recorded messages, then the rest of stdin. */
  input: ReadableStream<Uint8Array>;
  /** The stdout sink the front wrote to. */
  output: ByteSink;
  /** How many requests the front answered (logged as `stdio_front`). */
  answers: number;
  /** Resolves once the front's answers are written: the real server's come after. */
  written: Promise<void>;
  /** The id of the `initialize` the front answered: the real server's answer to it is dropped. */
  answered?: string | number;
}

/**
 * Whether `agentd <args>` runs a front-able server on stdio: `mcp <id>`
 * without --port (HTTP) or --help. Other flags (data dir, config) change
 * neither answer.
 */
export function frontServerOf(args: readonly string[]): string | undefined {
  if (args[0] !== "mcp") return undefined;
  const id = args[1];
  if (id === undefined || !FRONT_SERVERS.includes(id)) return undefined;
  for (const arg of args.slice(2)) {
    if (arg === "--") break;
    const flag = arg.split("=", 1)[0];
    if (flag === "--port" || flag === "--help" || flag === "-h") {
      return undefined;
    }
  }
  return id;
}

/** Starts the front for `id` on this process's stdin/stdout. */
export async function startFront(id: string): Promise<StdioFront> {
  const facts: FrontFacts = await import(
    new URL(`../tools/${id}/tool_listings.ts`, import.meta.url).href
  );
  // The gateway aggregates: its listing is not in its facts.
  if (facts.SERVER_FACTS.aggregates) {
    throw new Error(`${id}: its listing is not static; no stdio front`);
  }
  const front = new StdioFront(facts, stdoutSink());
  front.start();
  return front;
}

const MAX_LINE = 1 << 20;
/** How long the rest waits to load after the front's last answer when no tools/list came. */
const QUIET_MS = 50;
/** The longest the rest waits to load, whatever comes. */
const MAX_HOLD_MS = 500;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isId(value: unknown): value is string | number {
  return typeof value === "string" ||
    (typeof value === "number" && Number.isInteger(value));
}

/** Only these keys, each passing its check (absent ones pass). */
function only(value: Json, checks: Record<string, (v: unknown) => boolean>) {
  return Object.entries(value).every(([key, v]) =>
    key in checks && checks[key](v)
  );
}

const isString = (v: unknown): v is string => typeof v === "string";

/** `params._meta` as the SDK's RequestSchema takes it (a progress token at most). */
function isMeta(value: unknown): boolean {
  return isObject(value) &&
    only(value, {
      progressToken: (v) => isString(v) || typeof v === "number",
    });
}

/**
 * Objects holding only objects (`{ elicitation: { form: {} } }`): what every
 * client capability but `roots` is in the SDK's schema, as far as the front
 * vouches. Anything else (a flag, a list) goes to the real server.
 */
function objectsAllTheWay(value: unknown, depth = 0): boolean {
  return isObject(value) && depth < 8 &&
    Object.values(value).every((v) => objectsAllTheWay(v, depth + 1));
}

/** An initialize request the SDK accepts, as far as the front can vouch: else the real server answers. */
function plainInitialize(params: unknown): params is {
  protocolVersion: string;
} {
  if (!isObject(params)) return false;
  if (
    !isString(params.protocolVersion) || !isObject(params.capabilities) ||
    !isObject(params.clientInfo)
  ) return false;
  const client = params.clientInfo;
  if (!isString(client.name) || !isString(client.version)) return false;
  return only(params, {
    protocolVersion: isString,
    capabilities: (caps) =>
      isObject(caps) &&
      Object.entries(caps).every(([key, value]) =>
        key === "roots"
          ? isObject(value) &&
            only(value, { listChanged: (v) => typeof v === "boolean" })
          : objectsAllTheWay(value)
      ),
    clientInfo: (info) =>
      isObject(info) &&
      only(info, {
        name: isString,
        version: isString,
        title: isString,
        websiteUrl: isString,
        description: isString,
      }),
    _meta: isMeta,
  });
}

/** tools/list or ping without a cursor or anything else the front would have to judge. */
function plainParams(params: unknown): boolean {
  return params === undefined ||
    (isObject(params) && only(params, { _meta: isMeta }));
}

export class StdioFront {
  #facts: FrontFacts;
  #output: ByteSink;
  #writer: LineWriter;
  #decoder = new TextDecoder();
  /** Input not yet split into lines, as it came (a character may be cut). */
  #buffer: Uint8Array = new Uint8Array(0);
  /** Lines for the real server, each with its newline, as they came. */
  #recorded: Uint8Array[] = [];
  #initializeId: string | number | undefined;
  /** Set once a message waits for the real server: the front answers nothing more. */
  #waiting = false;
  #handedOver = false;
  #ended = false;
  #read: Promise<Uint8Array | null> | undefined;
  #chunk = new Uint8Array(64 * 1024);
  #answers = 0;
  #settled = Promise.withResolvers<void>();
  #isSettled = false;
  #quiet: ReturnType<typeof setTimeout> | undefined;
  #cap: ReturnType<typeof setTimeout> | undefined;

  constructor(facts: FrontFacts, output: ByteSink) {
    this.#facts = facts;
    this.#output = output;
    // A failed write (stdout gone): the real server's transport meets it too.
    this.#writer = new LineWriter(output, () => {});
  }

  start(): void {
    this.#loop();
    this.#wake();
    // A client that keeps pinging without listing does not hold the load back.
    this.#cap = setTimeout(() => this.#settle(), MAX_HOLD_MS);
  }

  /**
   * Resolves when the rest may load: loading it takes the main thread for
   * hundreds of milliseconds (module evaluation runs at a stretch), and a
   * tools/list that arrives meanwhile would wait for it. So: once the front
   * answered tools/list, once a message waits for the real server, at the
   * end of input, or after QUIET_MS without a message the front answered
   * (a client that sends nothing more, or takes its time).
   */
  settled(): Promise<void> {
    return this.#settled.promise;
  }

  #settle(): void {
    clearTimeout(this.#quiet);
    clearTimeout(this.#cap);
    this.#isSettled = true;
    this.#settled.resolve();
  }

  /** (Re)starts the quiet timer: the front answered, more may follow at once. */
  #wake(): void {
    if (this.#isSettled) return;
    clearTimeout(this.#quiet);
    this.#quiet = setTimeout(() => this.#settle(), QUIET_MS);
  }

  /** One read of stdin at a time: a read under way at handover is the real server's. */
  #next(): Promise<Uint8Array | null> {
    this.#read ??= Deno.stdin.read(this.#chunk).then((n) => {
      this.#read = undefined;
      return n === null ? null : this.#chunk.slice(0, n);
    });
    return this.#read;
  }

  async #loop(): Promise<void> {
    try {
      while (!this.#waiting) {
        const chunk = await this.#next();
        if (this.#handedOver) return;
        if (chunk === null) {
          this.#ended = true;
          return;
        }
        this.#receive(chunk);
      }
    } catch {
      // A stdin that fails: the real server's transport reads it and says so.
    } finally {
      this.#settle();
    }
  }

  #receive(chunk: Uint8Array): void {
    const all = new Uint8Array(this.#buffer.length + chunk.length);
    all.set(this.#buffer);
    all.set(chunk, this.#buffer.length);
    let start = 0;
    for (
      let nl = all.indexOf(10);
      nl >= 0 && !this.#waiting;
      nl = all.indexOf(10, start)
    ) {
      const line = all.subarray(start, nl + 1);
      start = nl + 1;
      this.#line(line);
    }
    this.#buffer = all.subarray(start);
    if (this.#buffer.length > MAX_LINE) this.#waiting = true;
  }

  #line(line: Uint8Array): void {
    const message = this.#parse(line);
    if (message === undefined) {
      this.#wait(line);
      return;
    }
    const { id, method, params } = message;
    if (this.#initializeId === undefined) {
      if (method === "initialize" && isId(id) && plainInitialize(params)) {
        this.#initializeId = id;
        this.#recorded.push(line);
        const versions = this.#facts.PROTOCOL_VERSIONS;
        const facts = this.#facts.SERVER_FACTS;
        this.#answer(id, {
          protocolVersion: versions.supported.includes(params.protocolVersion)
            ? params.protocolVersion
            : versions.latest,
          capabilities: facts.capabilities,
          serverInfo: this.#facts.SERVER_INFO,
          ...(facts.instructions ? { instructions: facts.instructions } : {}),
        });
      } else this.#wait(line);
      return;
    }
    if (method === "notifications/initialized" && id === undefined) {
      this.#recorded.push(line);
    } else if (method === "tools/list" && isId(id) && plainParams(params)) {
      this.#answer(id, {
        tools: iconsAt(this.#facts.TOOL_LISTINGS, undefined),
      });
      this.#settle();
    } else if (method === "ping" && isId(id) && plainParams(params)) {
      this.#answer(id, {});
    } else this.#wait(line);
  }

  #parse(
    line: Uint8Array,
  ): { id?: unknown; method: string; params?: unknown } | undefined {
    let value: unknown;
    try {
      value = JSON.parse(this.#decoder.decode(line));
    } catch {
      return undefined;
    }
    if (!isObject(value) || value.jsonrpc !== "2.0") return undefined;
    const method = value.method;
    if (typeof method !== "string") return undefined;
    return { id: value.id, method, params: value.params };
  }

  /** This and everything after it is the real server's. */
  #wait(line: Uint8Array): void {
    this.#recorded.push(line);
    this.#waiting = true;
  }

  #answer(id: string | number, result: unknown): void {
    this.#answers++;
    this.#wake();
    // In the SDK's key order: the same bytes as the real server's answer.
    this.#writer.write(JSON.stringify({ result, jsonrpc: "2.0", id })).catch(
      () => {},
    );
  }

  /** Stops the front: the recorded messages, then the rest of stdin, for the real server. */
  handover(): Handover {
    this.#handedOver = true;
    this.#settle();
    const parts = [...this.#recorded, this.#buffer].filter((part) =>
      part.length > 0
    );
    this.#recorded = [];
    this.#buffer = new Uint8Array(0);
    const ended = this.#ended;
    const input = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        const part = parts.shift();
        if (part !== undefined) {
          controller.enqueue(part);
          return;
        }
        const chunk = ended ? null : await this.#next();
        if (chunk === null) controller.close();
        else controller.enqueue(chunk);
      },
    });
    return {
      input,
      output: this.#output,
      answers: this.#answers,
      written: this.#writer.drain(),
      ...(this.#initializeId === undefined
        ? {}
        : { answered: this.#initializeId }),
    };
  }
}
