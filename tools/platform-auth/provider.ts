// One platform's authorization server as oauth4webapi sees it: discovery or
// explicit endpoints, client authentication, and every grant we use. No
// protocol is written here; this file only wires the library.

import type {
  AuthorizationServer,
  Client,
  ClientAuth,
  DeviceAuthorizationResponse,
  IntrospectionResponse,
  TokenEndpointResponse,
} from "./oauth.ts";
import { lazy } from "../../platform/lazy.ts";
import { isLoopback } from "../../platform/http_guards.ts";
import { messageOf } from "../../platform/errors.ts";
import type { PlatformConfig } from "./config.ts";

/** oauth4webapi, loaded on the first grant or discovery, not with the server (idle memory). */
export async function oauthLibrary() {
  return (await lazy<typeof import("./oauth.ts")>(
    "./oauth.ts",
    import.meta.url,
  )).oauth;
}

export interface Provider {
  as: AuthorizationServer;
  client: Client;
  auth: ClientAuth;
  /** Plain http is allowed for loopback providers only (tests, local IdPs). */
  insecure: boolean;
  timeoutMs: number;
}

/** The provider refused the grant: the user must authenticate again. */
export class GrantRejected extends Error {
  override name = "GrantRejected";
  constructor(readonly error: string, description: string | undefined) {
    super(`${error}${description ? `: ${description}` : ""}`);
  }
}

/** The provider could not be reached or failed (5xx): worth retrying. */
export class ProviderUnavailable extends Error {
  override name = "ProviderUnavailable";
}

/** A platform's provider URLs (its own settings' names). */
export const ENDPOINTS = [
  "issuer",
  "authorization_endpoint",
  "token_endpoint",
  "revocation_endpoint",
  "introspection_endpoint",
  "device_authorization_endpoint",
  "jwks_uri",
] as const;

/** Every URL of a platform is https, or http on a loopback host. */
export function checkEndpoints(settings: PlatformConfig): void {
  for (const field of ENDPOINTS) {
    const value = settings[field];
    if (value === undefined) continue;
    const url = new URL(value);
    if (url.protocol === "https:") continue;
    if (url.protocol === "http:" && isLoopback(url.hostname)) continue;
    throw new Error(
      `config.${field} must be https (http only on a loopback host): ${value}`,
    );
  }
}

function usesHttp(settings: PlatformConfig): boolean {
  return ENDPOINTS.some((field) =>
    settings[field]?.startsWith("http:") ?? false
  );
}

/** Discovers (issuer) or assembles (explicit endpoints) the authorization server. */
export async function resolveProvider(
  settings: PlatformConfig,
  clientSecret: string | undefined,
  timeoutMs: number,
): Promise<Provider> {
  const oauth = await oauthLibrary();
  const insecure = usesHttp(settings);
  let as: AuthorizationServer;
  if (settings.issuer !== undefined && settings.token_endpoint === undefined) {
    as = await discover(new URL(settings.issuer), insecure, timeoutMs);
  } else {
    const token = settings.token_endpoint;
    if (token === undefined) {
      throw new Error("config needs issuer or token_endpoint");
    }
    as = {
      issuer: settings.issuer ?? new URL(token).origin,
      token_endpoint: token,
    };
  }
  // Explicit endpoints win over discovered ones.
  for (const field of ENDPOINTS) {
    const value = settings[field];
    if (value !== undefined && field !== "issuer") {
      as = { ...as, [field]: value };
    }
  }
  const client: Client = { client_id: settings.client_id ?? "" };
  const method = settings.token_endpoint_auth_method ??
    (clientSecret === undefined ? "none" : "client_secret_basic");
  const auth = method === "none" || clientSecret === undefined
    ? oauth.None()
    : method === "client_secret_post"
    ? oauth.ClientSecretPost(clientSecret)
    : oauth.ClientSecretBasic(clientSecret);
  return { as, client, auth, insecure, timeoutMs };
}

async function discover(
  issuer: URL,
  insecure: boolean,
  timeoutMs: number,
): Promise<AuthorizationServer> {
  const oauth = await oauthLibrary();
  let lastError: unknown;
  // OIDC discovery first, then RFC 8414.
  for (const algorithm of ["oidc", "oauth2"] as const) {
    try {
      const response = await oauth.discoveryRequest(issuer, {
        algorithm,
        [oauth.allowInsecureRequests]: insecure,
        signal: AbortSignal.timeout(timeoutMs),
      });
      return await oauth.processDiscoveryResponse(issuer, response);
    } catch (error) {
      lastError = error;
    }
  }
  throw new ProviderUnavailable(
    `Cannot discover ${issuer.href}: ${messageOf(lastError)}`,
  );
}

type OAuth = Awaited<ReturnType<typeof oauthLibrary>>;

function options(oauth: OAuth, provider: Provider) {
  return {
    [oauth.allowInsecureRequests]: provider.insecure,
    signal: AbortSignal.timeout(provider.timeoutMs),
  };
}

/** The URL the person opens to consent (PKCE S256, one-time state). */
export function authorizationUrl(
  provider: Provider,
  request: {
    redirectUri: string;
    state: string;
    codeChallenge: string;
    scopes: readonly string[];
    extra: Readonly<Record<string, string>>;
  },
): URL {
  const endpoint = provider.as.authorization_endpoint;
  if (endpoint === undefined) {
    throw new Error("the provider has no authorization_endpoint");
  }
  const url = new URL(endpoint);
  for (const [name, value] of Object.entries(request.extra)) {
    url.searchParams.set(name, value);
  }
  url.searchParams.set("client_id", provider.client.client_id);
  url.searchParams.set("redirect_uri", request.redirectUri);
  url.searchParams.set("response_type", "code");
  if (request.scopes.length > 0) {
    url.searchParams.set("scope", request.scopes.join(" "));
  }
  url.searchParams.set("state", request.state);
  url.searchParams.set("code_challenge", request.codeChallenge);
  url.searchParams.set("code_challenge_method", "S256");
  return url;
}

export async function exchangeCode(
  provider: Provider,
  callback: URLSearchParams,
  expected: { state: string; redirectUri: string; codeVerifier: string },
): Promise<TokenEndpointResponse> {
  return await translate(async (oauth) => {
    const params = oauth.validateAuthResponse(
      provider.as,
      provider.client,
      callback,
      expected.state,
    );
    const response = await oauth.authorizationCodeGrantRequest(
      provider.as,
      provider.client,
      provider.auth,
      params,
      expected.redirectUri,
      expected.codeVerifier,
      options(oauth, provider),
    );
    return await oauth.processAuthorizationCodeResponse(
      provider.as,
      provider.client,
      response,
    );
  });
}

export async function refreshGrant(
  provider: Provider,
  refreshToken: string,
): Promise<TokenEndpointResponse> {
  return await translate(async (oauth) => {
    const response = await oauth.refreshTokenGrantRequest(
      provider.as,
      provider.client,
      provider.auth,
      refreshToken,
      options(oauth, provider),
    );
    return await oauth.processRefreshTokenResponse(
      provider.as,
      provider.client,
      response,
    );
  });
}

export async function clientCredentialsGrant(
  provider: Provider,
  scopes: readonly string[],
): Promise<TokenEndpointResponse> {
  return await translate(async (oauth) => {
    const parameters: Record<string, string> = {};
    if (scopes.length > 0) parameters.scope = scopes.join(" ");
    const response = await oauth.clientCredentialsGrantRequest(
      provider.as,
      provider.client,
      provider.auth,
      parameters,
      options(oauth, provider),
    );
    return await oauth.processClientCredentialsResponse(
      provider.as,
      provider.client,
      response,
    );
  });
}

export async function startDeviceAuthorization(
  provider: Provider,
  scopes: readonly string[],
): Promise<DeviceAuthorizationResponse> {
  return await translate(async (oauth) => {
    const parameters: Record<string, string> = {};
    if (scopes.length > 0) parameters.scope = scopes.join(" ");
    const response = await oauth.deviceAuthorizationRequest(
      provider.as,
      provider.client,
      provider.auth,
      parameters,
      options(oauth, provider),
    );
    return await oauth.processDeviceAuthorizationResponse(
      provider.as,
      provider.client,
      response,
    );
  });
}

/** One poll of the device grant; undefined while the person has not finished. */
export async function pollDeviceCode(
  provider: Provider,
  deviceCode: string,
): Promise<TokenEndpointResponse | "pending" | "slow_down"> {
  try {
    return await translate(async (oauth) => {
      const response = await oauth.deviceCodeGrantRequest(
        provider.as,
        provider.client,
        provider.auth,
        deviceCode,
        options(oauth, provider),
      );
      return await oauth.processDeviceCodeResponse(
        provider.as,
        provider.client,
        response,
      );
    });
  } catch (error) {
    if (error instanceof GrantRejected) {
      if (error.error === "authorization_pending") return "pending";
      if (error.error === "slow_down") return "slow_down";
    }
    throw error;
  }
}

export async function revoke(
  provider: Provider,
  token: string,
  hint: "access_token" | "refresh_token",
): Promise<void> {
  await translate(async (oauth) => {
    const response = await oauth.revocationRequest(
      provider.as,
      provider.client,
      provider.auth,
      token,
      {
        ...options(oauth, provider),
        additionalParameters: { token_type_hint: hint },
      },
    );
    await oauth.processRevocationResponse(response);
  });
}

export async function introspect(
  provider: Provider,
  token: string,
): Promise<IntrospectionResponse> {
  return await translate(async (oauth) => {
    const response = await oauth.introspectionRequest(
      provider.as,
      provider.client,
      provider.auth,
      token,
      options(oauth, provider),
    );
    return await oauth.processIntrospectionResponse(
      provider.as,
      provider.client,
      response,
    );
  });
}

/** Library errors → GrantRejected (an OAuth error answer) or ProviderUnavailable (network, 5xx). */
async function translate<T>(body: (oauth: OAuth) => Promise<T>): Promise<T> {
  const oauth = await oauthLibrary();
  try {
    return await body(oauth);
  } catch (error) {
    if (error instanceof oauth.ResponseBodyError) {
      if (error.status >= 500) {
        throw new ProviderUnavailable(
          `the provider answered ${error.status} (${error.error})`,
        );
      }
      throw new GrantRejected(error.error, error.error_description);
    }
    if (error instanceof oauth.AuthorizationResponseError) {
      throw new GrantRejected(error.error, error.error_description);
    }
    if (
      error instanceof TypeError ||
      (error instanceof DOMException &&
        (error.name === "TimeoutError" || error.name === "AbortError"))
    ) {
      throw new ProviderUnavailable(
        `cannot reach the provider: ${messageOf(error)}`,
      );
    }
    throw error;
  }
}
