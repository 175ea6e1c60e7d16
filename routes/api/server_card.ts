// GET /.well-known/mcp.json (and SEP-2127's /.well-known/mcp/server-card):
// the daemon's MCP server card, read without a
// session or token by discovery tools and registries. Its fields follow
// SEP-2127 (MCP Server Cards: name, version, title, description, icons,
// remotes with authentication, capabilities); a daemon hosts several
// servers, so `servers` (our addition) holds one such card per server, each
// with its endpoint and the names of its own tools. Nothing secret: no
// token, no file path, no upstream the operator registered.

import { Hono } from "hono";
import { z } from "zod";
import type { GuardVariables } from "../../platform/http_guards.ts";
import { SUPPORTED_PROTOCOL_VERSIONS } from "../../platform/mcp_sdk_types.ts";
import type { HostedServer } from "../../tools/kit/host.ts";
import { ICON_TYPE, iconPath } from "../../tools/kit/icons.ts";
import { capabilitiesOf } from "../../tools/kit/transport/sdk_features.ts";

/** Where the card is: the path clients look for, and SEP-2127's own. */
export const SERVER_CARD_PATHS = [
  "/.well-known/mcp.json",
  "/.well-known/mcp/server-card",
] as const;
export const SERVER_CARD_SCHEMA =
  "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";
/** The reverse-DNS namespace of card names, as of the `_meta` keys (io.agentd/origin). */
const NAMESPACE = "io.agentd";

export interface ServerCardOptions {
  hosts: readonly HostedServer[];
  /** "daemon": every server at /mcp/<id> (the gateway also at /mcp); "single": the one server at /mcp. */
  layout: "daemon" | "single";
  version: string;
  /** Whether a request needs `Authorization: Bearer …` (a daemon token, agent tokens or JWTs). */
  authRequired: boolean;
}

const Icon = z.object({ src: z.string(), mimeType: z.string() });

const Remote = z.object({
  type: z.literal("streamable-http"),
  url: z.string().describe("The MCP endpoint (streamable HTTP)"),
  supportedProtocolVersions: z.array(z.string()),
  authentication: z.object({
    required: z.boolean(),
    schemes: z.array(z.string()).describe(
      "`bearer`: Authorization: Bearer <the daemon token, an agent's token or a JWT>",
    ),
  }),
});
type Remote = z.infer<typeof Remote>;

const cardFields = {
  name: z.string().describe("Reverse-DNS name: io.agentd/<server>"),
  version: z.string(),
  title: z.string(),
  description: z.string().optional(),
  icons: z.array(Icon).optional(),
  remotes: z.array(Remote),
  capabilities: z.record(z.string(), z.unknown()).describe(
    "MCP ServerCapabilities",
  ),
};

const ServerEntry = z.object({
  ...cardFields,
  toolNames: z.array(z.string()).describe(
    "The server's own tools (not the gateway's upstream tools, which change at run time)",
  ),
});
type ServerEntry = z.infer<typeof ServerEntry>;

/** The card's shape (SEP-2127 fields, plus `servers`), for the OpenAPI document and tests. */
export const ServerCard = z.object({
  $schema: z.string(),
  ...cardFields,
  servers: z.array(ServerEntry).describe(
    "One card per server this daemon hosts",
  ),
});
export type ServerCard = z.infer<typeof ServerCard>;

/** The card as a client that reached the daemon at `origin` reads it (its URLs are absolute). */
export function serverCard(
  options: ServerCardOptions,
  origin: string,
): ServerCard {
  const remote = (path: string): Remote => ({
    type: "streamable-http",
    url: `${origin}${path}`,
    supportedProtocolVersions: [...SUPPORTED_PROTOCOL_VERSIONS],
    authentication: {
      required: options.authRequired,
      schemes: ["bearer"],
    },
  });
  const single = options.layout === "single";
  const servers = options.hosts.map((host): ServerEntry => {
    const spec = host.spec;
    return {
      name: `${NAMESPACE}/${spec.id}`,
      version: spec.version,
      title: spec.title,
      ...summaryOf(spec.instructions),
      ...(spec.icons
        ? {
          icons: [{
            src: `${origin}${iconPath(spec.id)}`,
            mimeType: ICON_TYPE,
          }],
        }
        : {}),
      remotes: [remote(single ? "/mcp" : `/mcp/${spec.id}`)],
      capabilities: capabilitiesOf(host),
      toolNames: (host.deferredListings ?? spec.tools).map((tool) => tool.name),
    };
  });
  // One endpoint for everything: the gateway at /mcp, or the lone server.
  const front = single
    ? servers[0]
    : servers.find((server) => server.name === `${NAMESPACE}/gateway`);
  return {
    $schema: SERVER_CARD_SCHEMA,
    name: `${NAMESPACE}/agentd`,
    version: options.version,
    title: "agentd",
    description: `${
      single
        ? "One MCP tool server at /mcp"
        : `MCP tool servers on one daemon, each at /mcp/<server>${
          front ? "; the gateway at /mcp aggregates them" : ""
        }`
    }. Authenticate with Authorization: Bearer <token> (the daemon token, an agent's token or a JWT) when required.`,
    ...(front?.icons ? { icons: front.icons } : {}),
    remotes: front ? [remote("/mcp")] : [],
    capabilities: front?.capabilities ?? {},
    servers,
  };
}

/** The first clause of a server's instructions, as its one-line description. */
function summaryOf(instructions: string | undefined): { description?: string } {
  if (instructions === undefined) return {};
  const end = instructions.search(/[.:](\s|$)/);
  return { description: end < 0 ? instructions : instructions.slice(0, end) };
}

/** Mount at each of SERVER_CARD_PATHS. */
export function serverCardRoutes(
  options: ServerCardOptions,
): Hono<{ Variables: GuardVariables }> {
  const app = new Hono<{ Variables: GuardVariables }>();
  app.get(
    "/",
    (c) =>
      c.json(serverCard(options, new URL(c.req.url).origin), 200, {
        "cache-control": "public, max-age=300",
        // Public by design (SEP-2127): a page the Origin guard admits may read it.
        "access-control-allow-origin": "*",
      }),
  );
  return app;
}
