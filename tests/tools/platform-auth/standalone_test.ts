// `agentd mcp platform-auth --port N --init-store` as a real process: the
// standalone face serves /mcp, /oauth/callback and /health; platforms and
// tokens survive a restart; --init-store refuses an existing store; another
// key leaves the server in Error (never a reset store); no secret in any log.

import assert from "node:assert/strict";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../../platform/mcp_sdk.ts";
import {
  type Daemon,
  freePort,
  runCli,
  spawnDaemon,
  spawnServe,
  tempDir,
} from "../../helpers.ts";
import { assertLogsFree, newKey } from "./harness.ts";
import { startMockServer } from "./providers.ts";

async function withClient<T>(
  daemon: Daemon,
  body: (
    call: (
      tool: string,
      args?: Record<string, unknown>,
    ) => Promise<Record<string, unknown>>,
  ) => Promise<T>,
): Promise<T> {
  const transport = new StreamableHTTPClientTransport(
    new URL(`${daemon.url}/mcp`),
  );
  const client = new Client({ name: "platform-auth-alone", version: "1.0.0" });
  await client.connect(transport);
  try {
    return await body(async (tool, args = {}) => {
      const result = await client.callTool({ name: tool, arguments: args });
      assert.ok(!result.isError, `${tool}: ${JSON.stringify(result.content)}`);
      return { ...(result.structuredContent ?? {}) };
    });
  } finally {
    await transport.terminateSession().catch(() => {});
    await client.close();
  }
}

Deno.test("platform-auth alone: --init-store, /oauth/callback, /health, restart, wrong key", async () => {
  await using dir = await tempDir();
  const mock = await startMockServer();
  const key = newKey();
  const otherKey = newKey();
  const secret = "alone-secret-" + crypto.randomUUID();
  const seen = [key, otherKey, secret];
  const logs: string[] = [];
  const keep = (daemon: Daemon) => {
    logs.push(
      ...daemon.logs.map((line) => JSON.stringify(line)),
      ...daemon.stray,
    );
  };
  const port = freePort();
  const args = [
    "mcp",
    "platform-auth",
    "--port",
    String(port),
    "--data-dir",
    dir.path,
  ];
  try {
    let daemon = await spawnDaemon([...args, "--init-store"], {
      env: { AGENTD_SECRET_KEY: key },
    });
    let token = "";
    try {
      token = await withClient(daemon, async (call) => {
        await call("add_platform", {
          platform: "mock",
          config: {
            issuer: mock.issuer,
            client_id: "aloneclient",
            client_secret: secret,
          },
        });
        const started = await call("authenticate", { platform: "mock" });
        assert.equal(
          started.redirect_uri,
          `http://127.0.0.1:${port}/oauth/callback`,
        );
        const redirect = await fetch(String(started.authorization_url), {
          redirect: "manual",
        });
        await redirect.body?.cancel();
        const location = redirect.headers.get("location") ?? "";
        seen.push(new URL(location).searchParams.get("code") ?? "");
        const landed = await fetch(location);
        assert.equal(landed.status, 200);
        assert.match(
          await landed.text(),
          /Platform "mock" is connected/,
        );
        const again = await fetch(location);
        assert.equal(again.status, 400, "a replayed callback is refused");
        await again.body?.cancel();
        const health = await (await fetch(`${daemon.url}/health`)).json();
        const details = health.servers["platform-auth"].details;
        assert.equal(details.platforms.mock.status, "active");
        const metrics = await (await fetch(`${daemon.url}/metrics`)).text();
        assert.match(
          metrics,
          /agentd_platform_auth_token_expiry_seconds\{platform="mock"\} \d+/,
        );
        return String(
          (await call("get_token", { platform: "mock" })).access_token,
        );
      });
      seen.push(token);
    } finally {
      assert.equal((await daemon.stop()).code, 0);
      keep(daemon);
    }

    // --init-store on an existing store refuses and changes nothing.
    const refused = await runCli([...args, "--init-store"], {
      AGENTD_SECRET_KEY: key,
    });
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /credential store already exists/);
    logs.push(refused.stderr);

    // Another key: Error phase with a clear message, in `serve` (the daemon runs on) and alone (it exits).
    const served = await spawnServe(dir.path, {
      env: { AGENTD_SECRET_KEY: otherKey },
      extra: ["--servers", "platform-auth"],
    });
    try {
      const health = await (await fetch(`${served.url}/health`)).json();
      assert.equal(health.servers["platform-auth"].phase, "error");
      assert.match(health.servers["platform-auth"].error, /cannot be unsealed/);
    } finally {
      await served.stop();
      keep(served);
    }
    const wrong = await runCli(args, { AGENTD_SECRET_KEY: otherKey });
    assert.notEqual(wrong.code, 0);
    assert.match(wrong.stderr, /cannot be unsealed/);
    logs.push(wrong.stderr);

    // Restart with the right key: the platform and its token are still there.
    daemon = await spawnDaemon(args, { env: { AGENTD_SECRET_KEY: key } });
    try {
      await withClient(daemon, async (call) => {
        const listed = await call("list_platforms");
        assert.equal(listed.count, 1);
        assert.equal(
          (await call("get_auth_status", { platform: "mock" })).status,
          "active",
        );
        assert.equal(
          (await call("get_token", { platform: "mock" })).access_token,
          token,
        );
      });
    } finally {
      assert.equal((await daemon.stop()).code, 0);
      keep(daemon);
    }
  } finally {
    await mock.close();
  }
  assert.ok(logs.some((line) => line.includes("token_operation")));
  assertLogsFree(logs, seen);
});
