// The platform-auth config section (its scalar keys are also
// `agentd mcp platform-auth` flags: `init_store` → `--init-store`), and the
// shape of one platform's configuration given to `add_platform`.

import { z } from "zod";

export const PlatformAuthConfig = z.object({
  init_store: z.boolean().default(false)
    .describe(
      "Create the credential store and refuse to start if one already exists",
    ),
  keychain: z.enum(["auto", "off"]).default("auto")
    .describe(
      "Master key from the OS keychain when present (auto), else AGENTD_SECRET_KEY or the key file",
    ),
  refresh_margin_s: z.number().int().min(0).max(86_400).default(300)
    .describe("Refresh a token this many seconds before it expires"),
  refresh_retries: z.number().int().min(0).max(10).default(3)
    .describe("Retries of a refresh that failed on the network"),
  retry_backoff_ms: z.number().int().min(0).max(600_000).default(1_000)
    .describe("First retry delay of a failed refresh; doubles each retry"),
  state_ttl_s: z.number().int().min(30).max(3_600).default(600)
    .describe(
      "How long an authorization's state, and a key or consent page, stay valid",
    ),
  redirect_uri: z.string().url().optional()
    .describe(
      "Redirect URI to register at providers (default: <this address>/oauth/callback)",
    ),
  alert_webhook: z.string().url().optional()
    .describe("URL that receives a JSON POST for every operator alert"),
  http_timeout_ms: z.number().int().min(1_000).max(120_000).default(15_000)
    .describe("Timeout of every request to a provider"),
});
export type PlatformAuthConfig = z.output<typeof PlatformAuthConfig>;

const endpoint = z.string().url();

/** An api_key platform's probe: a request that succeeds only with a good key. */
export const ApiKeyProbe = z.object({
  url: endpoint.describe("URL to request with the key"),
  method: z.enum(["GET", "POST", "HEAD"]).default("GET"),
  header: z.string().min(1).default("Authorization")
    .describe("Header that carries the key"),
  prefix: z.string().default("Bearer ")
    .describe('Text before the key in the header ("" for a bare key)'),
}).strict();

/** A platform's name as tools take it. */
export const PlatformName = z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, {
  message: "a platform name is 1-64 lowercase letters, digits, '.', '_' or '-'",
}).describe("Platform name, e.g. github");

export const PlatformConfig = z.object({
  preset: z.string().min(1).optional()
    .describe(
      "A catalogue entry (github, google, microsoft, slack, ...) to start from",
    ),
  grant: z.enum([
    "authorization_code",
    "device_code",
    "client_credentials",
    "api_key",
  ]).optional().describe(
    "How tokens are obtained (default from the catalogue or authorization_code)",
  ),
  issuer: endpoint.optional().describe(
    "Issuer URL: endpoints come from RFC 8414 / OIDC discovery",
  ),
  authorization_endpoint: endpoint.optional(),
  token_endpoint: endpoint.optional(),
  revocation_endpoint: endpoint.optional(),
  introspection_endpoint: endpoint.optional(),
  device_authorization_endpoint: endpoint.optional(),
  jwks_uri: endpoint.optional(),
  client_id: z.string().min(1).optional(),
  client_secret: z.string().min(1).optional()
    .describe("Write-only: sealed in the store, never returned"),
  scopes: z.array(z.string().min(1)).optional(),
  token_endpoint_auth_method: z.enum([
    "client_secret_basic",
    "client_secret_post",
    "none",
  ]).optional(),
  authorize_params: z.record(z.string(), z.string()).optional()
    .describe("Extra authorization request parameters (audience, prompt, ...)"),
  redirect_uri: endpoint.optional()
    .describe("Exact redirect URI registered for this client"),
  open_browser: z.boolean().optional()
    .describe("authenticate opens the URL in the default browser on a desktop"),
  api_key: z.string().min(1).optional()
    .describe("Write-only: the key of an api_key platform"),
  api_key_probe: ApiKeyProbe.optional(),
}).strict();
export type PlatformConfig = z.output<typeof PlatformConfig>;

export type Grant = NonNullable<PlatformConfig["grant"]>;
