// Issue 33, row 9: a JWT without `exp` would bind its bearer to an agent
// forever, and JWKS keys without issuer/audience checks accept any token of
// the key owner's realm. The first is refused at the door, the second at
// start.

import assert from "node:assert/strict";
import { signAgentJwt } from "../../platform/jwt.ts";
import { spawnDaemon, tempDir } from "../helpers.ts";

const OPERATOR = "operator-token-" + crypto.randomUUID();
const SECRET = "jwt-secret-" + crypto.randomUUID();

function encodeBase64Url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replaceAll("+", "-")
    .replaceAll("/", "_").replace(/=+$/, "");
}

/** An HS256 JWT with exactly `claims` (no exp unless given), signed by hand. */
async function signedJwt(
  claims: Record<string, unknown>,
  secret: string,
): Promise<string> {
  const text = (value: unknown) =>
    encodeBase64Url(new TextEncoder().encode(JSON.stringify(value)));
  const input = `${text({ alg: "HS256", typ: "JWT" })}.${text(claims)}`;
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const signature = await crypto.subtle.sign(
    "HMAC",
    key,
    new TextEncoder().encode(input),
  );
  return `${input}.${encodeBase64Url(new Uint8Array(signature))}`;
}

Deno.test("security jwt: a JWT without exp is refused (401, saying so); one with exp is accepted", async () => {
  await using dir = await tempDir();
  const daemon = await spawnDaemon(
    ["serve", "--port", "0", "--data-dir", dir.path, "--servers", "memory"],
    { env: { AGENTD_TOKEN: OPERATOR, AGENTD_JWT__SECRET: SECRET } },
  );
  try {
    const forever = await signedJwt({
      agent: "alice",
      iat: Math.floor(Date.now() / 1000),
    }, SECRET);
    const refused = await fetch(`${daemon.url}/health`, {
      headers: { authorization: `Bearer ${forever}` },
    });
    assert.equal(refused.status, 401);
    const body = await refused.json();
    assert.equal(body.error.code, "unauthorized");
    assert.match(body.error.message, /the JWT has no exp claim/);

    const expiring = await signAgentJwt({ secret: SECRET, agent: "alice" });
    const accepted = await fetch(`${daemon.url}/health`, {
      headers: { authorization: `Bearer ${expiring}` },
    });
    await accepted.body?.cancel();
    assert.equal(accepted.status, 200);
  } finally {
    await daemon.stop();
  }
});

for (
  const [missing, env] of [
    ["issuer and audience", {}],
    ["audience", { AGENTD_JWT__ISSUER: "https://issuer.example" }],
    ["issuer", { AGENTD_JWT__AUDIENCE: "agentd" }],
  ] as const
) {
  Deno.test(`security jwt: a jwks_url config without ${missing} stops agentd at start`, async () => {
    await using dir = await tempDir();
    let stderr = "";
    try {
      const daemon = await spawnDaemon(
        ["serve", "--port", "0", "--data-dir", dir.path, "--servers", "memory"],
        {
          env: {
            AGENTD_TOKEN: OPERATOR,
            AGENTD_JWT__JWKS_URL: "http://127.0.0.1:9/jwks.json",
            ...env,
          },
        },
      );
      await daemon.stop();
      assert.fail("agentd started with jwt.jwks_url and no issuer/audience");
    } catch (error) {
      if (error instanceof assert.AssertionError) throw error;
      stderr = error instanceof Error ? error.message : String(error);
    }
    assert.match(stderr, /jwt\.issuer and jwt\.audience/);
  });
}
