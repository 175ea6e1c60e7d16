// The HTTP face: guards first, then one sub-app per resource, one error shape.

import { type Context, Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import type { AgentService } from "../agents/service.ts";
import type { A2AService } from "../agents/a2a/mod.ts";
import { errorResponse } from "../platform/http_errors.ts";
import {
  bodyCheck,
  callerCheck,
  type Check,
  type GuardVariables,
  hostCheck,
  originCheck,
} from "../platform/http_guards.ts";
import type { JwtVerifier } from "../platform/jwt.ts";
import {
  credentialsProblem,
  unauthenticatedIsOperator,
} from "../platform/identity.ts";
import type { Logger } from "../platform/log.ts";
import type { Store } from "../platform/store/mod.ts";
import type { HostedServer } from "../tools/kit/host.ts";
import type { McpHttpEndpoint } from "../tools/kit/transport/http_server.ts";
import { adminPage, adminRoutes } from "../web/admin.ts";
import { healthRoutes } from "./api/health.ts";
import { iconPaths, iconRoutes } from "./api/icons.ts";
import { SERVER_CARD_PATHS, serverCardRoutes } from "./api/server_card.ts";
import { policyRoutes } from "./api/policy.ts";
import { taskRoutes } from "./api/tasks.ts";
import { mcpRoutes, singleMcpRoute } from "./api/mcp.ts";
import { metricsRoutes } from "./api/metrics.ts";
import { callbackPaths, callbackRoute, formPaths } from "./callbacks.ts";
import { agentRoutes } from "./api/agents.ts";
import { A2A_PATH, a2aRoutes, wellKnownRoutes } from "./api/a2a.ts";
import { dashboardRoutes } from "../web/dashboard.ts";
import { DashboardSessions, sessionOrToken } from "../web/dashboard_session.ts";
import { docsRoutes } from "../web/docs.ts";
import { runRoutes, teamRoutes } from "./api/teams.ts";
import { asHttpError, jsonRequestsOnly, plainLists } from "./api/v1_http.ts";
import { MemoRouter } from "./memo_router.ts";
import { lazy } from "../platform/lazy.ts";

export interface AppOptions {
  hosts: readonly HostedServer[];
  endpoints: ReadonlyMap<string, McpHttpEndpoint>;
  /** "daemon": every server at /mcp/<id>; "single": the one server at /mcp. */
  layout: "daemon" | "single";
  bindHost: string;
  allowedHosts: readonly string[];
  allowedOrigins: readonly string[];
  maxBodyBytes: number;
  /** When set, every request needs `Authorization: Bearer <token>`. */
  token?: string;
  /** Agent name -> token: requests with one are bound to that agent. */
  agentTokens?: Readonly<Record<string, string>>;
  /** Verifies JWT bearer tokens (the `jwt` config); their agent claim binds the caller. */
  jwt?: JwtVerifier;
  /** The agent runtime behind /v1 (daemon layout only). */
  agents?: AgentService;
  /** The A2A layer over `agents` (/v1/a2a, /.well-known/agent-card.json). */
  a2a?: A2AService;
  /** Dashboard login sessions (a fresh set when not given). */
  sessions?: DashboardSessions;
  version: string;
  /** Reported in /health (a shared store that does not answer = degraded). */
  store?: Store;
  startedAt: number;
  log: Logger;
}

export type AppEnv = { Variables: GuardVariables };

export function createApp(options: AppOptions): Hono<AppEnv> {
  const credentials = {
    token: options.token,
    agentTokens: options.agentTokens ?? {},
    jwt: options.jwt,
  };
  const problem = credentialsProblem(credentials);
  if (problem !== undefined) {
    throw new Error(`Cannot build the app: ${problem}`);
  }
  const app = new Hono<AppEnv>({ router: new MemoRouter() });
  const log = options.log.child({ component: "http" });

  // Before the caller check: the browser a provider redirects carries no
  // bearer token; what the server checks (a one-time state, a one-time page
  // and its form token) authorizes it.
  const callbacks = new Set(callbackPaths(options.hosts));
  // Discovery reads these without a token: the server card and the icons.
  const open = new Set([
    ...callbacks,
    ...SERVER_CARD_PATHS,
    ...iconPaths(options.hosts),
  ]);
  const forms = new Set(formPaths(options.hosts));
  // The dashboard's session cookie stands in for the daemon token.
  const sessions = options.sessions ?? new DashboardSessions();
  const caller = sessionOrToken(sessions, callerCheck(credentials));
  const checks: Check[] = [
    hostCheck({
      bindHost: options.bindHost,
      allowedHosts: options.allowedHosts,
    }),
    originCheck({ allowedOrigins: options.allowedOrigins }),
    (c) =>
      open.has(c.req.path) &&
        (c.req.method === "GET" || c.req.method === "HEAD" ||
          (c.req.method === "POST" && forms.has(c.req.path)))
        ? undefined
        : caller(c),
    bodyCheck(options.maxBodyBytes),
    ...(options.layout === "daemon" && options.agents
      ? [jsonRequestsOnly]
      : []),
  ];
  const lists = options.layout === "daemon" && options.agents
    ? plainLists(options.agents)
    : undefined;
  /** The one error shape, for whatever a check or a route throws. */
  const failed = (error: unknown, c: Context<AppEnv>): Response => {
    const http = asHttpError(error);
    if (http) {
      return errorResponse(http.status, http.message, {
        details: http.details,
        code: http.code,
      });
    }
    if (error instanceof HTTPException) return error.getResponse();
    log.error("unhandled", { method: c.req.method, path: c.req.path, error });
    return errorResponse(500, "Internal error; see the daemon log");
  };
  // Every request: logged, then the guards in order, in one middleware.
  app.use(async (c, next) => {
    const started = performance.now();
    let refused: Response | undefined;
    try {
      const verdict = firstRefusal(c, checks);
      refused = verdict instanceof Promise ? await verdict : verdict;
    } catch (error) {
      refused = failed(error, c);
    }
    if (refused !== undefined) c.res = refused;
    else {
      const plain = lists?.(c);
      if (plain === undefined) await next();
      else {
        try {
          c.res = await plain;
        } catch (error) {
          c.res = failed(error, c);
        }
      }
    }
    const fields = {
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      duration_ms: Math.round(performance.now() - started),
    };
    if (c.res.status >= 500) log.warn("request", fields);
    else log.debug("request", fields);
  });
  for (const path of callbacks) {
    app.route(path, callbackRoute(options.hosts, path));
  }

  app.route(
    "/health",
    healthRoutes({
      hosts: options.hosts,
      version: options.version,
      startedAt: options.startedAt,
      store: options.store,
    }),
  );
  const card = serverCardRoutes({
    hosts: options.hosts,
    layout: options.layout,
    version: options.version,
    authRequired: !unauthenticatedIsOperator(credentials),
  });
  for (const path of SERVER_CARD_PATHS) app.route(path, card);
  app.route("/", iconRoutes(options.hosts));
  app.route(
    "/metrics",
    metricsRoutes({ hosts: options.hosts, startedAt: options.startedAt }),
  );
  const guard = options.hosts.find((host) => host.guard)?.guard;
  if (guard) app.route("/admin/policy", policyRoutes(guard));
  const tasks = options.hosts.find((host) => host.tasks)?.tasks;
  if (tasks) app.route("/admin/tasks", taskRoutes(tasks));
  app.route(
    "/admin",
    adminRoutes((viewer) =>
      adminPage(options.hosts, { version: options.version, viewer })
    ),
  );
  app.route(
    "/dashboard",
    dashboardRoutes({ sessions, version: options.version }),
  );
  if (options.layout === "daemon") {
    app.route("/mcp", mcpRoutes(options.endpoints));
    if (options.agents) mountV1(app, options.agents, options.a2a, log);
  } else {
    const [endpoint] = options.endpoints.values();
    if (endpoint) app.route("/mcp", singleMcpRoute(endpoint));
  }

  app.notFound((c) =>
    errorResponse(404, `Nothing at ${c.req.method} ${c.req.path}`)
  );
  app.onError(failed);
  return app;
}

/** The /v1 API (agents, teams, runs, A2A), its OpenAPI document and its docs page. */
function mountV1(
  app: Hono<AppEnv>,
  agents: AgentService,
  a2a: A2AService | undefined,
  log: Logger,
): void {
  app.route("/v1/agents", agentRoutes(agents, log));
  app.route("/v1/teams", teamRoutes(agents));
  app.route("/v1/runs", runRoutes(agents));
  if (a2a) {
    app.route(A2A_PATH, a2aRoutes(a2a));
    app.route("/.well-known", wellKnownRoutes(a2a));
  }
  // The document and the operation tables it is built from load on the
  // first request for it, not with the daemon.
  let document: Promise<Record<string, unknown>> | undefined;
  const openapi = () =>
    document ??= lazy<typeof import("./api/openapi.ts")>(
      "./api/openapi.ts",
      import.meta.url,
    ).then(({ openApiDocument }) => openApiDocument());
  app.get("/v1/openapi.json", async (c) => c.json(await openapi()));
  app.route("/docs", docsRoutes(openapi));
}

/**
 * The first of `checks` that refuses the request, else undefined; a promise
 * only once a check answers with one (most requests need none).
 */
function firstRefusal(
  c: Context<AppEnv>,
  checks: readonly Check[],
  from = 0,
): Response | undefined | Promise<Response | undefined> {
  for (let i = from; i < checks.length; i++) {
    const verdict = checks[i](c);
    if (verdict instanceof Promise) {
      return verdict.then((refused) =>
        refused ?? firstRefusal(c, checks, i + 1)
      );
    }
    if (verdict !== undefined) return verdict;
  }
  return undefined;
}
