// JWT bearer tokens: HS256 with a secret, asymmetric keys from a real JWKS
// endpoint, the agent claim binding the caller, and every refusal.

import assert from "node:assert/strict";
import { resolveCaller } from "../../platform/identity.ts";
import { JwtConfig, jwtVerifier, signAgentJwt } from "../../platform/jwt.ts";

const SECRET = "a-shared-secret-of-at-least-32-characters";

function base64url(bytes: Uint8Array | string): string {
  const raw = typeof bytes === "string"
    ? new TextEncoder().encode(bytes)
    : bytes;
  return btoa(String.fromCharCode(...raw)).replaceAll("+", "-")
    .replaceAll("/", "_").replace(/=+$/, "");
}

/** An ES256 JWT signed with WebCrypto (JWS wants the raw r||s signature WebCrypto gives). */
async function es256(
  key: CryptoKey,
  kid: string,
  payload: Record<string, unknown>,
): Promise<string> {
  const head = base64url(JSON.stringify({ alg: "ES256", kid, typ: "JWT" }));
  const body = base64url(JSON.stringify(payload));
  const signature = await crypto.subtle.sign(
    { name: "ECDSA", hash: "SHA-256" },
    key,
    new TextEncoder().encode(`${head}.${body}`),
  );
  return `${head}.${body}.${base64url(new Uint8Array(signature))}`;
}

Deno.test("jwt: HS256 binds the caller to the agent claim; other keys, expiry, issuer and claims are refused", async () => {
  const verify = jwtVerifier(
    JwtConfig.parse({ secret: SECRET, issuer: "central", audience: "memory" }),
  );
  const good = await signAgentJwt({
    secret: SECRET,
    agent: "alice",
    issuer: "central",
    audience: "memory",
  });
  assert.deepEqual(await verify(good), { ok: true, agent: "alice" });
  const cases: [Promise<string>, RegExp][] = [
    [
      signAgentJwt({
        secret: SECRET + "-other",
        agent: "alice",
        issuer: "central",
        audience: "memory",
      }),
      /signature does not verify/,
    ],
    [
      signAgentJwt({
        secret: SECRET,
        agent: "alice",
        issuer: "central",
        audience: "memory",
        expiresIn: Math.floor(Date.now() / 1000) - 10,
      }),
      /expired/,
    ],
    [
      signAgentJwt({
        secret: SECRET,
        agent: "alice",
        issuer: "elsewhere",
        audience: "memory",
      }),
      /"iss" claim/,
    ],
    [
      signAgentJwt({
        secret: SECRET,
        agent: "../alice",
        issuer: "central",
        audience: "memory",
      }),
      /"agent" claim must name an agent/,
    ],
  ];
  for (const [token, why] of cases) {
    const result = await verify(await token);
    assert.equal(result.ok, false);
    assert.match(result.ok ? "" : result.message, why);
  }
  // Through the bearer resolution: bound to the agent, like an agent token.
  const credentials = { agentTokens: {}, jwt: verify };
  assert.deepEqual(
    await resolveCaller(`Bearer ${good}`, credentials),
    { ok: true, caller: { agent: "alice" } },
  );
  const refused = await resolveCaller("Bearer a.b.c", credentials);
  assert.equal(refused.ok, false);
  assert.equal(refused.ok ? 0 : refused.status, 401);
  // Without a jwt config a JWT is just an unknown token.
  assert.deepEqual(await resolveCaller(`Bearer ${good}`, { agentTokens: {} }), {
    ok: false,
    status: 401,
    message: "Invalid bearer token",
  });
});

Deno.test("jwt: keys from a JWKS URL; a key it does not list and HS256 are refused", async () => {
  const pair = await crypto.subtle.generateKey(
    { name: "ECDSA", namedCurve: "P-256" },
    true,
    ["sign", "verify"],
  );
  const stranger = await crypto.subtle.generateKey(
    { name: "ECDSA", namedCurve: "P-256" },
    true,
    ["sign", "verify"],
  );
  const jwk = await crypto.subtle.exportKey("jwk", pair.publicKey);
  let fetched = 0;
  await using jwks = Deno.serve({ port: 0, onListen() {} }, () => {
    fetched++;
    return Response.json({
      keys: [{ ...jwk, kid: "k1", alg: "ES256", use: "sig" }],
    });
  });
  const verify = jwtVerifier(
    JwtConfig.parse({
      jwks_url: `http://127.0.0.1:${jwks.addr.port}/.well-known/jwks.json`,
      issuer: "idp",
      audience: "agentd",
      agent_claim: "sub",
    }),
  );
  const now = Math.floor(Date.now() / 1000);
  const claims = { sub: "bob", iss: "idp", aud: "agentd", exp: now + 60 };
  assert.deepEqual(
    await verify(
      await es256(pair.privateKey, "k1", claims),
    ),
    { ok: true, agent: "bob" },
  );
  assert.ok(fetched >= 1, "the keys came from the JWKS endpoint");
  const forged = await verify(
    await es256(stranger.privateKey, "k1", claims),
  );
  assert.equal(forged.ok, false);
  const { exp: _, ...forever } = claims;
  const endless = await verify(await es256(pair.privateKey, "k1", forever));
  assert.deepEqual(endless, {
    ok: false,
    message: "Invalid bearer token: the JWT has no exp claim",
  });
  const hs = await verify(
    await signAgentJwt({ secret: SECRET, agent: "bob", claim: "sub" }),
  );
  assert.equal(hs.ok, false);
  assert.match(hs.ok ? "" : hs.message, /algorithm is not accepted/);
});

Deno.test("jwt config: exactly one of secret and jwks_url; a JWKS needs issuer and audience", () => {
  assert.throws(() => JwtConfig.parse({}), /exactly one of/);
  assert.throws(
    () =>
      JwtConfig.parse({ secret: SECRET, jwks_url: "https://idp.example/jwks" }),
    /exactly one of/,
  );
  assert.throws(() => JwtConfig.parse({ secret: "short" }), /32 characters/);
  for (
    const partial of [{}, { issuer: "idp" }, { audience: "agentd" }]
  ) {
    assert.throws(
      () =>
        JwtConfig.parse({ jwks_url: "https://idp.example/jwks", ...partial }),
      /with jwt\.jwks_url, set jwt\.issuer and jwt\.audience/,
    );
  }
  assert.equal(
    JwtConfig.parse({
      jwks_url: "https://idp.example/jwks",
      issuer: "idp",
      audience: "agentd",
    }).audience,
    "agentd",
  );
  assert.equal(JwtConfig.parse({ secret: SECRET }).agent_claim, "agent");
});
