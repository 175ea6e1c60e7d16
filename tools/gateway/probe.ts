// probeMcp: one MCP initialize to a configured URL, reporting what answered
// (JSON or SSE), then the session it opened closed again.

import { cut, describeFailure } from "./failures.ts";
import { VERSION } from "../../platform/version.ts";

export interface ProbeResult {
  url: string;
  reachable: boolean;
  server_name?: string;
  server_version?: string;
  protocol_version?: string;
  latency_ms: number;
  error?: string;
}

const PROTOCOL_VERSION = "2025-11-25";
const INITIALIZE_ID = 1;
/** Larger answers to initialize are not worth reading. */
const MAX_ANSWER_BYTES = 1024 * 1024;
/** The session DELETE is a courtesy: never wait longer than this for it. */
const CLOSE_TIMEOUT_MS = 1000;

/**
 * Sends one MCP initialize to `url` and reports what answered. The whole
 * exchange (connect, headers, body) is bounded by `timeoutMs`; redirects are
 * not followed, so only the configured address is ever contacted.
 */
export async function probeMcp(
  url: string,
  timeoutMs: number,
  fetchFn: typeof fetch = fetch,
): Promise<ProbeResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  let session: string | null = null;
  let result: ProbeResult;
  try {
    const response = await fetchFn(url, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: INITIALIZE_ID,
        method: "initialize",
        params: {
          protocolVersion: PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: "agentd-discovery", version: VERSION },
        },
      }),
      redirect: "manual",
      signal: controller.signal,
    });
    session = response.headers.get("mcp-session-id");
    const answer = await readAnswer(response);
    result = typeof answer === "string"
      ? { url, reachable: false, latency_ms: elapsed(), error: answer }
      : { url, ...initializeOutcome(answer), latency_ms: elapsed() };
  } catch (error) {
    result = {
      url,
      reachable: false,
      latency_ms: elapsed(),
      error: timedOut
        ? `timed out after ${timeoutMs} ms`
        : describeFailure(error),
    };
  } finally {
    clearTimeout(timer);
  }
  if (session !== null) {
    await closeSession(url, session, result.protocol_version, fetchFn);
  }
  return result;
}

/** The answer's JSON-RPC message, or why there is none (as the probe's error). */
async function readAnswer(response: Response): Promise<unknown> {
  if (response.status < 200 || response.status > 299) {
    await response.body?.cancel().catch(() => {});
    const location = response.headers.get("location");
    return location === null
      ? `HTTP ${response.status}`
      : `HTTP ${response.status} (redirect to ${cut(location)} not followed)`;
  }
  const type = (response.headers.get("content-type") ?? "").split(";")[0]
    .trim().toLowerCase();
  if (type === "application/json") {
    const text = await readText(response.body);
    if (text === undefined) return notMcp("answer larger than 1 MiB");
    try {
      return JSON.parse(text);
    } catch {
      return notMcp("answered invalid JSON");
    }
  }
  if (type === "text/event-stream") {
    const message = response.body && await firstSseAnswer(response.body);
    return message ?? notMcp("the event stream held no answer to initialize");
  }
  await response.body?.cancel().catch(() => {});
  return notMcp(
    type === "" ? "answered without a content type" : `answered ${cut(type)}`,
  );
}

async function readText(
  body: ReadableStream<Uint8Array> | null,
): Promise<string | undefined> {
  if (body === null) return "";
  const decoder = new TextDecoder();
  let text = "";
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.length;
    if (bytes > MAX_ANSWER_BYTES) return undefined; // leaving the loop cancels the body
    text += decoder.decode(chunk, { stream: true });
  }
  return text + decoder.decode();
}

/** The first `data:` message of the stream that answers our initialize. */
async function firstSseAnswer(
  body: ReadableStream<Uint8Array>,
): Promise<unknown> {
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.length;
    if (bytes > MAX_ANSWER_BYTES) return undefined;
    buffer += decoder.decode(chunk, { stream: true });
    // A lone trailing CR may be half of a CRLF: wait for the next chunk.
    const end = buffer.endsWith("\r") ? buffer.length - 1 : buffer.length;
    const lines = buffer.slice(0, end).split(/\r\n|\r|\n/);
    buffer = (lines.pop() ?? "") + buffer.slice(end);
    for (const line of lines) {
      if (line === "") {
        const message = parseMessage(data.join("\n"));
        data = [];
        if (isAnswer(message)) return message; // leaving the loop cancels the stream
      } else if (line.startsWith("data:")) {
        data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
      }
    }
  }
  return undefined;
}

function parseMessage(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isAnswer(message: unknown): boolean {
  return typeof message === "object" && message !== null &&
    "id" in message && message.id === INITIALIZE_ID;
}

type Outcome = Omit<ProbeResult, "url" | "latency_ms">;

function initializeOutcome(message: unknown): Outcome {
  if (
    typeof message !== "object" || message === null ||
    !("jsonrpc" in message) || message.jsonrpc !== "2.0" || !isAnswer(message)
  ) {
    return {
      reachable: false,
      error: notMcp("no JSON-RPC answer to initialize"),
    };
  }
  if ("error" in message) {
    const error = message.error;
    const text = typeof error === "object" && error !== null &&
        "message" in error && typeof error.message === "string"
      ? error.message
      : JSON.stringify(error);
    return { reachable: false, error: `initialize failed: ${cut(text)}` };
  }
  const result = "result" in message ? message.result : undefined;
  if (typeof result !== "object" || result === null) {
    return { reachable: false, error: notMcp("initialize had no result") };
  }
  const info = "serverInfo" in result ? result.serverInfo : undefined;
  const protocol = "protocolVersion" in result
    ? result.protocolVersion
    : undefined;
  if (
    typeof info !== "object" || info === null || !("name" in info) ||
    typeof info.name !== "string" || typeof protocol !== "string"
  ) {
    return {
      reachable: false,
      error: notMcp("initialize result lacks serverInfo or protocolVersion"),
    };
  }
  const version = "version" in info && typeof info.version === "string"
    ? info.version
    : undefined;
  return {
    reachable: true,
    server_name: cut(info.name),
    ...(version === undefined ? {} : { server_version: cut(version) }),
    protocol_version: cut(protocol),
  };
}

/** Ends the session the probe opened, so probing leaves nothing behind. */
async function closeSession(
  url: string,
  session: string,
  protocol: string | undefined,
  fetchFn: typeof fetch,
): Promise<void> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), CLOSE_TIMEOUT_MS);
  try {
    const response = await fetchFn(url, {
      method: "DELETE",
      headers: {
        "Mcp-Session-Id": session,
        ...(protocol === undefined ? {} : { "Mcp-Protocol-Version": protocol }),
      },
      redirect: "manual",
      signal: controller.signal,
    });
    await response.body?.cancel();
  } catch {
    // Best effort: the server expires idle sessions on its own.
  } finally {
    clearTimeout(timer);
  }
}

function notMcp(why: string): string {
  return `not an MCP server: ${why}`;
}
