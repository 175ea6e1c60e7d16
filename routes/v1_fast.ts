// The hottest reads of /v1, the full lists of agents and of teams (GET with
// no query string), answered before Hono: a request the guards would pass
// with nothing to check beyond its Host (no token configured, none sent, no
// Origin, no body) gets the page from the in-process view, with the same
// body, headers and ETag as through the app, and the same request log line.
// Anything else, and any failure, goes through the full app, which then
// answers or maps the error as always. In the daemon, Hono's context, its
// middleware chain and the header copies it makes were about a third of the
// CPU of such a GET.

import type { Logger } from "../platform/log.ts";
import { NO_LIST_QUERY, pageReply } from "./v1_http.ts";

type Fetch<R extends unknown[]> = (
  request: Request,
  ...rest: R
) => Response | Promise<Response>;

export interface FastListOptions {
  /** The agent service's lists (AgentService). */
  agents: {
    listAgents(page: typeof NO_LIST_QUERY): Promise<object>;
    listTeams(page: typeof NO_LIST_QUERY): Promise<object>;
  };
  /** The Host guard's verdict (platform/http_guards.ts hostAdmission). */
  admitsHost: (header: string | undefined) => boolean;
  /** A request without credentials is not the operator (platform/identity.ts unauthenticatedIsOperator): every request goes through the caller guard. */
  tokenRequired: boolean;
  /** The app's request logger (component "http"). */
  log: Logger;
}

/** `full`, with GET /v1/agents and GET /v1/teams answered first when they qualify. */
export function withFastLists<R extends unknown[]>(
  full: Fetch<R>,
  options: FastListOptions,
): Fetch<R> {
  if (options.tokenRequired) return full;
  const { agents, admitsHost, log } = options;
  const lists = new Map<string, () => Promise<object>>([
    ["/v1/agents", () => agents.listAgents(NO_LIST_QUERY)],
    ["/v1/teams", () => agents.listTeams(NO_LIST_QUERY)],
  ]);
  return (request, ...rest) => {
    if (request.method !== "GET") return full(request, ...rest);
    const url = request.url;
    const path = url.slice(url.indexOf("/", url.indexOf("//") + 2));
    const list = lists.get(path);
    if (list === undefined) return full(request, ...rest);
    const headers = request.headers;
    if (
      !admitsHost(headers.get("host") ?? undefined) ||
      headers.has("authorization") || headers.has("origin") ||
      headers.has("content-length") || headers.has("transfer-encoding")
    ) return full(request, ...rest);
    return answer(path, list, headers, () => full(request, ...rest), log);
  };
}

async function answer(
  path: string,
  list: () => Promise<object>,
  headers: Headers,
  full: () => Response | Promise<Response>,
  log: Logger,
): Promise<Response> {
  const started = performance.now();
  let page: object;
  try {
    page = await list();
  } catch {
    return await full(); // the app maps the error (a store down: 503)
  }
  const response = pageReply(page, headers.get("if-none-match") ?? undefined);
  log.debug("request", {
    method: "GET",
    path,
    status: response.status,
    duration_ms: Math.round(performance.now() - started),
  });
  return response;
}
