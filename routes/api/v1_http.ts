// What the /v1 routes share: reading a JSON body or a query against a zod
// schema (every problem a 400 naming the field), mapping the runtime's errors
// (agents/errors.ts, provider failures) to HTTP statuses and the JSON error
// shape, and the text/event-stream answer of a streamed send.

import type { Context, MiddlewareHandler } from "hono";
import { z } from "zod";
import { AgentError, type AgentErrorKind } from "../../agents/errors.ts";
import { ProviderError } from "../../agents/model.ts";
import { pageTag } from "../../agents/catalog_view.ts";
import { ListQuery } from "../../agents/schemas.ts";
import type { AgentService } from "../../agents/service.ts";
import {
  errorBody,
  errorResponse,
  type ErrorStatus,
  HttpError,
} from "../../platform/http_errors.ts";
import type { Check, GuardVariables } from "../../platform/http_guards.ts";
import { StoreUnavailable } from "../../platform/store/mod.ts";

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json(?:\s*;|$)/i;

const BODY_METHODS = new Set(["POST", "PUT", "PATCH"]);

/**
 * Every /v1 request that sends a body must declare JSON, before any route
 * reads it or starts work: a web page (another localhost port included) may
 * send text/plain, a form or an untyped Blob without a CORS preflight, but
 * not application/json, so without a daemon token this is what keeps pages
 * from starting agent turns. One of the app's checks (routes/mod.ts).
 */
export const jsonRequestsOnly: Check = (c) => {
  if (!BODY_METHODS.has(c.req.method) || !c.req.path.startsWith("/v1/")) {
    return undefined;
  }
  const type = c.req.header("content-type");
  if (type !== undefined && JSON_TYPE.test(type.trim())) return undefined;
  return errorResponse(
    415,
    type === undefined
      ? "The request has no Content-Type; send Content-Type: application/json"
      : `Content-Type "${type}" is not JSON; send Content-Type: application/json`,
  );
};

/** The request body, parsed and validated; nothing is done with a body that fails. */
export async function jsonBody<T extends z.ZodType>(
  c: Context,
  schema: T,
): Promise<z.output<T>> {
  const type = c.req.header("content-type");
  if (type !== undefined && !JSON_TYPE.test(type.trim())) {
    throw new HttpError(
      415,
      `Content-Type "${type}" is not JSON; send Content-Type: application/json`,
    );
  }
  const text = await c.req.text();
  if (text.trim() === "") {
    throw new HttpError(
      400,
      "The request body is empty; expected a JSON object",
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const why = error instanceof SyntaxError
      ? error.message.replace(/, ".*$/s, "")
      : "unreadable";
    throw new HttpError(400, `The request body is not valid JSON: ${why}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new HttpError(400, "The request body must be a JSON object");
  }
  return validate(schema, value, "body");
}

/** Pages read from the agents' in-process view are shared per version: serialized once. */
const pageBodies = new WeakMap<object, string>();

/**
 * `c.json(page)`, with the text kept for as long as the page object lives.
 * A page of the view carries its ETag; a request naming it in If-None-Match
 * gets 304 with no body.
 */
export function pageResponse(c: Context, page: object): Response {
  const tag = pageTag(page);
  if (tag === undefined) {
    return new Response(pageText(page), { headers: JSON_HEADERS });
  }
  const ifNoneMatch = c.req.header("if-none-match");
  if (ifNoneMatch !== undefined && tagListed(ifNoneMatch, tag)) {
    return new Response(null, { status: 304, headers: { etag: tag } });
  }
  return new Response(pageText(page), {
    headers: { "content-type": "application/json", etag: tag },
  });
}

const JSON_HEADERS = { "content-type": "application/json" } as const;

function pageText(page: object): string {
  let text = pageBodies.get(page);
  if (text === undefined) {
    text = JSON.stringify(page);
    pageBodies.set(page, text);
  }
  return text;
}

/** Whether an If-None-Match header names `tag` (weak comparison, RFC 9110 13.1.2). */
function tagListed(header: string, tag: string): boolean {
  for (const part of header.split(",")) {
    const listed = part.trim();
    if (listed === "*" || listed === tag || listed === `W/${tag}`) return true;
  }
  return false;
}

/** The list query's defaults, for a request with no query string (most list requests). */
export const NO_LIST_QUERY: z.infer<typeof ListQuery> = Object.freeze(
  ListQuery.parse({}),
);

/**
 * The answer to a GET of the whole list of agents or of teams (no query
 * string), once the guards passed: the page the routes would answer, without
 * their layer; undefined for any other request.
 */
export function plainLists(
  service: Pick<AgentService, "listAgents" | "listTeams">,
): (
  c: Context<{ Variables: GuardVariables }>,
) => Promise<Response> | undefined {
  const lists = new Map<string, (actor?: string) => Promise<object>>([
    ["/v1/agents", (actor) => service.listAgents(NO_LIST_QUERY, { actor })],
    ["/v1/teams", () => service.listTeams(NO_LIST_QUERY)],
  ]);
  return (c) => {
    if (c.req.method !== "GET" || c.req.url.includes("?")) return undefined;
    const list = lists.get(c.req.path);
    return list?.(c.get("caller")?.agent).then((page) => pageResponse(c, page));
  };
}

/** `queryOf(c, ListQuery)`, without a parse when the URL has no query string. */
export function listQueryOf(c: Context): z.infer<typeof ListQuery> {
  return c.req.url.includes("?") ? queryOf(c, ListQuery) : NO_LIST_QUERY;
}

/** The query string, validated (unknown parameters are rejected). */
export function queryOf<T extends z.ZodType>(
  c: Context,
  schema: T,
): z.output<T> {
  return validate(schema, c.req.query(), "query");
}

function validate<T extends z.ZodType>(
  schema: T,
  value: unknown,
  where: "body" | "query",
): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problems = result.error.issues.flatMap((issue) =>
    describeIssue(issue, value)
  );
  throw new HttpError(
    400,
    `Invalid request ${where}: ${
      problems.map((p) => `${p.field}: ${p.message}`).join("; ")
    }`,
    { problems },
  );
}

function describeIssue(
  issue: z.core.$ZodIssue,
  root: unknown,
): { field: string; message: string }[] {
  const field = (path: readonly PropertyKey[]) =>
    path.length === 0 ? "(root)" : path.map(String).join(".");
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((key) => ({
      field: field([...issue.path, key]),
      message: "unknown field",
    }));
  }
  let message = issue.message;
  if (issue.code === "invalid_type") {
    message = valueAt(root, issue.path) === undefined
      ? `required (${issue.expected})`
      : `expected ${issue.expected}`;
  }
  return [{ field: field(issue.path), message }];
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let node = root;
  for (const key of path) {
    if (typeof node !== "object" || node === null) return undefined;
    node = Reflect.get(node, key);
  }
  return node;
}

/** The one place the agent runtime's error kinds become HTTP statuses. */
const STATUS: Record<AgentErrorKind, ErrorStatus> = {
  invalid_request: 400,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  bad_gateway: 502,
  unavailable: 503,
  gateway_timeout: 504,
};

/** Runtime errors a client can act on, as HttpError; undefined for the rest. */
export function asHttpError(error: unknown): HttpError | undefined {
  if (error instanceof HttpError) return error;
  // The shared store is down: refuse rather than diverge; nothing was written.
  if (error instanceof StoreUnavailable) {
    return new HttpError(503, error.message, undefined, "unavailable");
  }
  if (error instanceof ProviderError) {
    const named = error.message.includes(error.provider)
      ? error.message
      : `Provider "${error.provider}": ${error.message}`;
    return new HttpError(STATUS[error.kind], named, error.details, error.kind);
  }
  if (error instanceof AgentError) {
    return new HttpError(
      STATUS[error.kind],
      error.message,
      error.details,
      error.kind,
    );
  }
  return undefined;
}

export type StreamEvent = { type: string; [key: string]: unknown };

/**
 * Runs `work`, streaming what it emits as server-sent events and its result
 * as a final `done` event (`error` if it fails). Until the first event, a
 * failure is thrown instead, so it becomes an ordinary JSON error response.
 */
export async function eventStream(
  work: (
    emit: (event: StreamEvent) => void,
    signal: AbortSignal,
  ) => Promise<unknown>,
  options: { signal?: AbortSignal; describe(error: unknown): HttpError },
): Promise<Response> {
  const encoder = new TextEncoder();
  const cancel = new AbortController();
  const signal = options.signal
    ? AbortSignal.any([options.signal, cancel.signal])
    : cancel.signal;
  const pending: Uint8Array[] = [];
  let sink: ReadableStreamDefaultController<Uint8Array> | undefined;
  let closed = false;
  const first = Promise.withResolvers<"event">();
  const write = (type: string, data: unknown) => {
    if (closed) return;
    const chunk = encoder.encode(
      `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`,
    );
    if (sink) sink.enqueue(chunk);
    else pending.push(chunk);
    first.resolve("event");
  };
  const result = work(({ type, ...data }) => write(type, data), signal);
  const outcome = await Promise.race([
    first.promise,
    result.then(() => "done" as const, () => "failed" as const),
  ]);
  if (outcome === "failed" && pending.length === 0) await result;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      sink = controller;
      for (const chunk of pending.splice(0)) controller.enqueue(chunk);
      result.then((body) => write("done", body), (error) => {
        if (closed) return; // the client left: nobody to tell
        const http = options.describe(error);
        write("error", {
          ...errorBody(http.code, http.message, http.details),
          status: http.status,
        });
      }).finally(() => {
        closed = true;
        try {
          controller.close();
        } catch {
          // the client went away
        }
      });
    },
    cancel() {
      closed = true;
      cancel.abort(new Error("The client closed the event stream"));
    },
  });
  return new Response(stream, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    },
  });
}

/**
 * Creating and deleting agents and teams is the operator's: a caller holding
 * an agent's token (an agent itself) may read, send and execute, not reshape
 * the fleet it belongs to.
 */
export const operatorOnly: MiddlewareHandler<{ Variables: GuardVariables }> =
  async (c, next) => {
    const agent = c.get("caller")?.agent;
    if (agent !== undefined) {
      throw new HttpError(
        403,
        `The token of agent "${agent}" cannot create or delete agents or teams; use the daemon token`,
      );
    }
    await next();
  };
