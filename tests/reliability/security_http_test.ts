// Every HTTP path of `agentd serve` and of `agentd mcp <server> --port`
// (listed from the served OpenAPI document, /health's servers and the fixed
// faces) behind a token: a bad Host and a foreign Origin get 403, no token
// 401, bodies over 1 MiB 413; off loopback without a token neither face
// starts; and no token ever reaches the logs.
// (tests/tools/http_test.ts proves the same guards on a few paths of a
// tokenless daemon; this walks all of them with a token.)

import { SERVER_CARD_PATHS } from "../../routes/api/server_card.ts";
import assert from "node:assert/strict";
import {
  type Daemon,
  rawRequest,
  runCli,
  spawnDaemon,
  tempDir,
} from "../helpers.ts";

export const OPERATOR_TOKEN = "op-token-" + crypto.randomUUID();
const BIG = "x".repeat(1024 * 1024 + 1);

/** Every path the `serve` face answers, with placeholders filled. */
async function servePaths(daemon: Daemon): Promise<string[]> {
  const auth = { authorization: `Bearer ${OPERATOR_TOKEN}` };
  const document = await (await fetch(`${daemon.url}/v1/openapi.json`, {
    headers: auth,
  })).json();
  const health = await (await fetch(`${daemon.url}/health`, { headers: auth }))
    .json();
  const servers = Object.keys(health.servers ?? {});
  assert.ok(servers.includes("memory"), JSON.stringify(health));
  return [
    ...Object.keys(document.paths).map((path) =>
      path.replace(/\{[^}]+\}/g, "someone")
    ),
    "/v1/openapi.json",
    "/health",
    "/metrics",
    "/admin",
    "/docs",
    "/oauth/callback",
    "/mcp",
    ...servers.map((server) => `/mcp/${server}`),
    "/mcp/no-such-server",
    "/no/such/path",
  ];
}

/** Walks `paths` with every guard and returns what failed (empty when all held). */
async function walkGuards(daemon: Daemon, paths: string[]): Promise<string[]> {
  const failures: string[] = [];
  const auth = { authorization: `Bearer ${OPERATOR_TOKEN}` };
  const json = { "content-type": "application/json" };
  const host = `127.0.0.1:${daemon.port}`;
  for (const path of paths) {
    for (const method of ["GET", "POST", "DELETE"]) {
      const cases: [string, number, Record<string, string>, string?][] = [
        ["bad Host", 403, { ...auth, ...json, host: "evil.example" }, "{}"],
        [
          "rebinding Host",
          403,
          { ...auth, ...json, host: `evil.example:${daemon.port}` },
          "{}",
        ],
        [
          "foreign Origin",
          403,
          { ...auth, ...json, host, origin: "https://evil.example" },
          "{}",
        ],
      ];
      // The browser a provider redirects to /oauth/callback carries no
      // bearer token: the one-time state authorizes its GET (a bad one is a
      // 400); other methods there still need the token. The server card is
      // public to GET (discovery without a session), like an agent card.
      const unauthenticated = method !== "GET"
        ? 401
        : path === "/oauth/callback"
        ? 400
        : (SERVER_CARD_PATHS as readonly string[]).includes(path)
        ? 200
        : 401;
      cases.push(
        ["no token", unauthenticated, { ...json, host }, "{}"],
        [
          "wrong token",
          unauthenticated,
          { ...json, host, authorization: `Bearer ${OPERATOR_TOKEN}x` },
          "{}",
        ],
      );
      if (method === "POST") {
        cases.push(["body over 1 MiB", 413, { ...auth, ...json, host }, BIG]);
      }
      for (const [what, expected, headers, body] of cases) {
        const reply = await rawRequest(daemon.port, {
          method,
          path,
          headers,
          body,
        });
        if (reply.status !== expected) {
          failures.push(
            `${what}: ${method} ${path} → ${reply.status} (want ${expected}) ${
              reply.body.slice(0, 120)
            }`,
          );
        }
      }
    }
  }
  return failures;
}

function assertNoSecretsLogged(daemon: Daemon, secrets: string[]): void {
  const logged = JSON.stringify(daemon.logs) + daemon.stray.join("\n");
  for (const secret of secrets) {
    assert.ok(!logged.includes(secret), `a secret reached the logs`);
  }
}

Deno.test("security: every path of `serve` refuses bad Host, foreign Origin, no token and >1 MiB", async () => {
  await using dir = await tempDir();
  const daemon = await spawnDaemon(
    ["serve", "--port", "0", "--data-dir", dir.path, "--log-level", "debug"],
    { env: { AGENTD_TOKEN: OPERATOR_TOKEN } },
  );
  try {
    const paths = await servePaths(daemon);
    assert.ok(paths.length > 25, `${paths.length} paths`);
    assert.deepEqual(await walkGuards(daemon, paths), []);
    const health = await fetch(`${daemon.url}/health`, {
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    });
    assert.equal(health.status, 200, "still serving after the walk");
    await health.body?.cancel();
  } finally {
    assert.equal((await daemon.stop()).code, 0);
  }
  assertNoSecretsLogged(daemon, [OPERATOR_TOKEN]);
});

Deno.test("security: every path of `mcp memory --port` refuses bad Host, foreign Origin, no token and >1 MiB", async () => {
  await using dir = await tempDir();
  const daemon = await spawnDaemon(
    ["mcp", "memory", "--port", "0", "--log-level", "debug"],
    {
      env: {
        AGENTD_TOKEN: OPERATOR_TOKEN,
        AGENTD_DATA_DIR: dir.path,
        XDG_DATA_HOME: dir.path,
      },
    },
  );
  try {
    assert.deepEqual(
      await walkGuards(daemon, ["/mcp", "/health", "/", "/elsewhere"]),
      [],
    );
  } finally {
    assert.equal((await daemon.stop()).code, 0);
  }
  assertNoSecretsLogged(daemon, [OPERATOR_TOKEN]);
});

Deno.test("security: off loopback without a token, neither `serve` nor `mcp --port` starts", async () => {
  await using dir = await tempDir();
  for (
    const args of [
      ["serve", "--host", "0.0.0.0", "--port", "0", "--data-dir", dir.path],
      ["serve", "--host", "::", "--port", "0", "--data-dir", dir.path],
      ["mcp", "memory", "--host", "0.0.0.0", "--port", "0"],
    ]
  ) {
    const result = await runCli(args, {
      AGENTD_DATA_DIR: dir.path,
      XDG_DATA_HOME: dir.path,
    });
    assert.notEqual(result.code, 0, args.join(" "));
    assert.match(result.stderr, /without a token/, args.join(" "));
  }
  // Proof the check is the token's: the same bind with one starts.
  const daemon = await spawnDaemon(
    ["mcp", "memory", "--host", "0.0.0.0", "--port", "0"],
    {
      env: {
        AGENTD_TOKEN: OPERATOR_TOKEN,
        AGENTD_DATA_DIR: dir.path,
        XDG_DATA_HOME: dir.path,
      },
    },
  );
  assert.equal((await daemon.stop()).code, 0);
});
