// Real OAuth servers on loopback for the platform-auth tests: oidc-provider
// (a certified OpenID provider) and oauth2-mock-server (where failures are
// injected), plus Chromium completing oidc-provider's login and consent.

import { createServer, type Server } from "node:http";
import assert from "node:assert/strict";
import Provider from "oidc-provider";
import { OAuth2Issuer, OAuth2Service } from "oauth2-mock-server";
import type { Browser, Page } from "puppeteer-core";

export interface OidcFixture {
  issuer: string;
  provider: Provider;
  /** Client secrets by client id; the tests collect them for the log check. */
  secrets: Record<string, string>;
  close(): Promise<void>;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      if (address === null || typeof address === "string") {
        reject(new Error("no port"));
        return;
      }
      resolve(address.port);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** oidc-provider on 127.0.0.1 with code+PKCE, refresh rotation, introspection, revocation and the device flow. */
export async function startOidcProvider(
  redirectUris: string[],
): Promise<OidcFixture> {
  const secret = () => crypto.randomUUID() + crypto.randomUUID();
  const secrets = {
    "agentd-web": secret(),
    "agentd-other": secret(),
    "agentd-device": secret(),
  };
  // The port is known only after listening; the issuer needs it first.
  let handler: (req: unknown, res: unknown) => void = () => {};
  const server = createServer((req, res) => handler(req, res));
  const port = await listen(server);
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: "agentd-web",
        client_secret: secrets["agentd-web"],
        redirect_uris: redirectUris,
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      },
      {
        client_id: "agentd-other",
        client_secret: secrets["agentd-other"],
        redirect_uris: redirectUris,
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      },
      {
        client_id: "agentd-device",
        client_secret: secrets["agentd-device"],
        redirect_uris: [],
        grant_types: [
          "urn:ietf:params:oauth:grant-type:device_code",
          "refresh_token",
        ],
        response_types: [],
      },
    ],
    features: {
      devInteractions: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      deviceFlow: { enabled: true },
    },
    pkce: { required: () => true },
    issueRefreshToken: (
      _ctx: unknown,
      client: { grantTypeAllowed(type: string): boolean },
    ) => Promise.resolve(client.grantTypeAllowed("refresh_token")),
    rotateRefreshToken: true,
    ttl: { AccessToken: 3600 },
    cookies: { keys: [secret()] },
  });
  provider.on(
    "server_error",
    (_ctx: unknown, error: unknown) => console.error("oidc-provider:", error),
  );
  const callback = provider.callback();
  handler = (req, res) => Reflect.apply(callback, undefined, [req, res]);
  return {
    issuer,
    provider,
    secrets,
    close: () => closeServer(server),
  };
}

export interface MockFixture {
  issuer: string;
  server: { service: OAuth2Service };
  /** Stops listening: requests fail on the network (connection refused). */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  close(): Promise<void>;
}

/**
 * oauth2-mock-server's service on a server of our own, so closing also ends
 * idle keep-alive connections (its own stop() waits for them).
 */
export async function startMockServer(): Promise<MockFixture> {
  const issuer = new OAuth2Issuer();
  await issuer.keys.generate("RS256");
  const service = new OAuth2Service(issuer);
  const server = createServer(service.requestHandler);
  const port = await listen(server);
  issuer.url = `http://127.0.0.1:${port}`;
  let listening = true;
  return {
    issuer: issuer.url,
    server: { service },
    async down() {
      listening = false;
      await closeServer(server);
    },
    up() {
      listening = true;
      return new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, "127.0.0.1", () => resolve());
      });
    },
    close: () => listening ? closeServer(server) : Promise.resolve(),
  };
}

/** Only loopback requests leave the page (the provider's pages link web fonts); `block` stops chosen ones. */
export async function loopbackOnly(
  page: Page,
  block: (url: string) => boolean = () => false,
): Promise<void> {
  await page.setRequestInterception(true);
  page.on("request", (request) => {
    const url = request.url();
    const host = new URL(url).hostname;
    if ((host === "127.0.0.1" || host === "localhost") && !block(url)) {
      request.continue().catch(() => {});
    } else request.abort().catch(() => {});
  });
}

/**
 * Signs in and consents on oidc-provider's dev pages (login, consent, device
 * confirmation) until `done(page)` says the flow is over.
 */
export async function consentInBrowser(
  browser: Browser,
  url: string,
  done: (page: Page) => boolean | Promise<boolean>,
  block?: (url: string) => boolean,
): Promise<Page> {
  const page = await browser.newPage();
  await loopbackOnly(page, block);
  const finished = async () => {
    try {
      return await done(page);
    } catch {
      return false; // the page was navigating
    }
  };
  // A blocked redirect fails the navigation; done() says whether that was the end.
  await page.goto(url, { waitUntil: "domcontentloaded" }).catch(() =>
    undefined
  );
  for (let step = 0; step < 8 && !(await finished()); step++) {
    const navigation = page.waitForNavigation({
      waitUntil: "domcontentloaded",
      timeout: 20_000,
    }).catch(() => undefined);
    try {
      if (await page.$("input[name=login]")) {
        await page.type("input[name=login]", "alice");
        await page.type("input[name=password]", "wonderland");
        await page.click("button[type=submit]");
      } else {
        // Consent and device confirmation: the page's Continue button.
        await page.click("button[autofocus]");
      }
    } catch (error) {
      // The page moved on by itself (a redirect) while being read; the next step looks again.
      const text = error instanceof Error ? error.message : String(error);
      if (!/context was destroyed|detached|navigation/i.test(text)) throw error;
    }
    await navigation;
  }
  assert.ok(await finished(), `the flow ended at ${page.url()}`);
  return page;
}
