// The dashboard's platform connections panel in headless Chromium against a
// real daemon and a real OAuth server (oauth2-mock-server): platforms listed
// with their status, Revoke revokes at the provider, Connect opens the
// provider's consent page.

import assert from "node:assert/strict";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../platform/mcp_sdk.ts";
import { browserTestIgnore, launchChromium } from "../browser.ts";
import { spawnServe, tempDir } from "../helpers.ts";
import { startMockServer } from "../tools/platform-auth/providers.ts";

const TOKEN = "dashboard-platforms-token-0123456789";

Deno.test({
  name:
    "dashboard: platform connections listed; Revoke and Connect act through platform-auth",
  ignore: browserTestIgnore,
  async fn() {
    await using dir = await tempDir();
    const mock = await startMockServer();
    let revocations = 0;
    mock.server.service.on("beforeRevoke", () => void revocations++);
    const daemon = await spawnServe(dir.path, {
      env: {
        AGENTD_TOKEN: TOKEN,
        AGENTD_SERVERS: "gateway,platform-auth",
      },
    });
    const client = new Client({ name: "platforms-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(
        new URL(`${daemon.url}/mcp/platform-auth`),
        { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } },
      ),
    );
    const ok = async (name: string, args: Record<string, unknown>) => {
      const result = await client.callTool({ name, arguments: args });
      assert.ok(!result.isError, `${name}: ${JSON.stringify(result.content)}`);
      return result;
    };
    try {
      await ok("add_platform", {
        platform: "machines",
        config: {
          issuer: mock.issuer,
          grant: "client_credentials",
          client_id: "m2m",
          client_secret: "m2m-secret-0123456789",
        },
      });
      await ok("authenticate", { platform: "machines" });
      await ok("add_platform", {
        platform: "people",
        config: {
          issuer: mock.issuer,
          client_id: "people-client",
          scopes: ["read"],
        },
      });

      await using browser = await launchChromium();
      const page = await browser.newPage();
      await page.setViewport({ width: 1280, height: 800 });
      const login = await fetch(`${daemon.url}/dashboard/login-codes`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      const { login_path } = await login.json();
      await page.goto(`${daemon.url}${login_path}`, { waitUntil: "load" });
      await page.waitForSelector('#platforms tr[data-key="machines"]', {
        timeout: 30_000,
      }).catch(async (error) => {
        throw new Error(
          `${error}; the panel shows: ${await page.$eval(
            "#platforms",
            (n) => n.textContent,
          )}`,
        );
      });
      const row = (name: string) =>
        page.$eval(
          `#platforms tr[data-key="${name}"]`,
          (node) => node.textContent ?? "",
        );
      assert.match(await row("machines"), /client_credentials.*active/);
      assert.match(
        await row("people"),
        /authorization_code.*not_authenticated/,
      );

      // Revoke: the provider is asked, the row leaves "active".
      await page.click(
        '#platforms tr[data-key="machines"] button[data-action="revoke"]',
      );
      await page.waitForFunction(
        `!document.querySelector('#platforms tr[data-key="machines"]').textContent.includes("active")`,
        { timeout: 15_000 },
      );
      assert.ok(revocations >= 1, "revoked at the provider");

      // Connect: the provider's authorization page opens in a new window;
      // oauth2-mock-server consents at once and redirects to the daemon's
      // /oauth/callback, which completes the flow.
      const authorizeUrls: string[] = [];
      mock.server.service.on(
        "beforeAuthorizeRedirect",
        (_redirect: unknown, request: { url?: string }) =>
          void authorizeUrls.push(request.url ?? ""),
      );
      await page.click(
        '#platforms tr[data-key="people"] button[data-action="connect"]',
      );
      await page.waitForFunction(
        `document.querySelector('#platforms tr[data-key="people"]').textContent.includes("active")`,
        // Polled by time: the consent window took the foreground, and a
        // background page runs no animation frames.
        { timeout: 30_000, polling: 100 },
      ).catch(async (error) => {
        throw new Error(
          `${error}; panel: ${await page.$eval(
            "#platforms",
            (n) => n.textContent,
          )}; seen: ${authorizeUrls}; targets: ${
            browser.targets().map((t) => t.url())
          }`,
        );
      });
      const authorize = new URL(authorizeUrls[0] ?? "/missing", mock.issuer);
      assert.equal(authorize.searchParams.get("client_id"), "people-client");
      assert.equal(authorize.searchParams.get("code_challenge_method"), "S256");
      assert.match(
        await page.$eval("#platforms-state", (n) => n.textContent ?? ""),
        /people/,
      );
    } finally {
      await client.close();
      await daemon.stop();
      await mock.close();
    }
  },
});
