// Dashboard login through `app.request()`: one-time codes (daemon token
// only, once, 60 s), the session cookie standing in for the token (reads
// anywhere, changes only from the daemon's own Origin), expiry and logout.

import assert from "node:assert/strict";
import { createLogger } from "../../platform/log.ts";
import { createApp } from "../../routes/mod.ts";
import { DashboardSessions } from "../../web/dashboard_session.ts";

const TOKEN = "dashboard-token-0123456789abcdef";
const ALICE = "alice-token-0123456789abcdef";
const BASE = "http://127.0.0.1:8765";

function fixture() {
  let now = Date.parse("2026-11-26T00:00:00Z");
  const sessions = new DashboardSessions(() => now);
  const app = createApp({
    hosts: [],
    endpoints: new Map(),
    layout: "daemon",
    bindHost: "127.0.0.1",
    allowedHosts: [],
    allowedOrigins: [],
    maxBodyBytes: 4096,
    token: TOKEN,
    agentTokens: { alice: ALICE },
    sessions,
    version: "1.2.3",
    startedAt: now,
    log: createLogger({ level: "error" }),
  });
  const request = (
    path: string,
    init: RequestInit & { headers?: Record<string, string> } = {},
  ) =>
    app.request(`${BASE}${path}`, {
      ...init,
      headers: { host: "127.0.0.1:8765", ...init.headers },
    });
  return {
    request,
    advance(ms: number) {
      now += ms;
    },
    async code(token = TOKEN): Promise<Response> {
      return await request("/dashboard/login-codes", {
        method: "POST",
        headers: { authorization: `Bearer ${token}` },
      });
    },
  };
}

async function login(
  f: ReturnType<typeof fixture>,
): Promise<{ cookie: string; path: string }> {
  const issued = await f.code();
  assert.equal(issued.status, 201);
  const { login_path: path } = await issued.json();
  const response = await f.request(path);
  assert.equal(response.status, 303);
  return {
    cookie: (response.headers.get("set-cookie") ?? "").split(";")[0] ?? "",
    path,
  };
}

Deno.test("dashboard login: codes need the daemon token and work once", async () => {
  const f = fixture();
  assert.equal(
    (await f.request("/dashboard/login-codes", { method: "POST" })).status,
    401,
  );
  const alice = await f.code(ALICE);
  assert.equal(alice.status, 403);
  assert.match((await alice.json()).error.message, /not an agent's token/);
  const { cookie, path } = await login(f);
  assert.match(cookie, /^agentd_session=[0-9a-f]{48}$/);
  assert.ok(!cookie.includes(TOKEN));
  assert.equal((await f.request(path)).status, 401);
  assert.equal((await f.request("/dashboard/login?code=nope")).status, 401);
  assert.equal((await f.request("/dashboard/login")).status, 401);
});

Deno.test("dashboard login: a code expires after 60 s, a session after 12 h", async () => {
  const f = fixture();
  const { login_path } = await (await f.code()).json();
  f.advance(61_000);
  assert.equal((await f.request(login_path)).status, 401);
  const { cookie } = await login(f);
  assert.equal(
    (await f.request("/dashboard", { headers: { cookie } })).status,
    200,
  );
  f.advance(12 * 60 * 60_000 + 1);
  assert.equal(
    (await f.request("/dashboard", { headers: { cookie } })).status,
    401,
  );
});

Deno.test("dashboard session: reads with the cookie, changes only from its own Origin, ends on logout", async () => {
  const f = fixture();
  const { cookie } = await login(f);
  const page = await f.request("/dashboard", { headers: { cookie } });
  assert.equal(page.status, 200);
  const html = await page.text();
  assert.ok(!html.includes(TOKEN));
  const csp = page.headers.get("content-security-policy") ?? "";
  const nonce = csp.match(/script-src 'nonce-([^']+)'/)?.[1] ?? "";
  assert.ok(nonce.length >= 16);
  assert.ok(html.includes(`<script nonce="${nonce}">`));
  assert.equal(page.headers.get("cache-control"), "no-store");
  assert.equal(
    (await f.request("/health", { headers: { cookie } })).status,
    200,
  );

  const logout = (origin?: string) =>
    f.request("/dashboard/logout", {
      method: "POST",
      headers: { cookie, ...(origin ? { origin } : {}) },
    });
  assert.equal((await logout()).status, 403);
  assert.equal((await logout("http://localhost:9999")).status, 403);
  assert.equal((await logout("http://evil.example")).status, 403);
  assert.equal(
    (await f.request("/dashboard", { headers: { cookie } })).status,
    200,
  );
  const out = await logout(BASE);
  assert.equal(out.status, 204);
  assert.match(out.headers.get("set-cookie") ?? "", /agentd_session=;/);
  assert.equal(
    (await f.request("/dashboard", { headers: { cookie } })).status,
    401,
  );
  // A wrong token is not rescued by a cookie.
  const { cookie: fresh } = await login(f);
  const mixed = await f.request("/dashboard", {
    headers: { cookie: fresh, authorization: "Bearer wrong-token-0123456789" },
  });
  assert.equal(mixed.status, 401);
});
