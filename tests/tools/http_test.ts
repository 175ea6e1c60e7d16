// Streamable HTTP through the real daemon: sessions, stateless requests,
// resumable streams, and the guards (Host, Origin, body size, token).

import assert from "node:assert/strict";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../platform/mcp_sdk.ts";
import {
  type Daemon,
  INITIALIZE_REQUEST,
  rawRequest,
  runCli,
  spawnDaemon,
  tempDir,
} from "../helpers.ts";

const ACCEPT = "application/json, text/event-stream";
const INITIALIZE = INITIALIZE_REQUEST;

function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: ACCEPT, ...headers },
    body: JSON.stringify(body),
  });
}

/** The JSON-RPC messages of an SSE or JSON response body. */
async function messagesOf(response: Response): Promise<unknown[]> {
  const text = await response.text();
  if (response.headers.get("content-type")?.startsWith("application/json")) {
    return [JSON.parse(text)];
  }
  return text.split("\n").filter((line) =>
    line.startsWith("data: ") && line.length > 6
  )
    .map((line) => JSON.parse(line.slice(6)));
}

async function withDaemon(
  args: string[],
  env: Record<string, string>,
  body: (daemon: Daemon) => Promise<void>,
): Promise<void> {
  await using dir = await tempDir();
  const daemon = await spawnDaemon([
    "serve",
    "--port",
    "0",
    "--data-dir",
    dir.path,
    ...args,
  ], { env });
  try {
    await body(daemon);
  } finally {
    const status = await daemon.stop();
    assert.equal(status.code, 0);
    assert.deepEqual(daemon.stray, []);
  }
}

Deno.test("http: sessions, unknown session 404, DELETE, stateless POST, GET without session 405", async () => {
  await withDaemon([], {}, async (daemon) => {
    const mcp = `${daemon.url}/mcp/conformance`;

    const init = await post(mcp, INITIALIZE);
    assert.equal(init.status, 200);
    const session = init.headers.get("mcp-session-id");
    assert.ok(session, "initialize returns Mcp-Session-Id");
    const [initResult] = await messagesOf(init);
    assert.match(JSON.stringify(initResult), /"protocolVersion":"2025-11-25"/);

    const headers = {
      "mcp-session-id": session,
      "mcp-protocol-version": "2025-11-25",
    };
    assert.equal(
      (await post(
        mcp,
        { jsonrpc: "2.0", method: "notifications/initialized" },
        headers,
      )).status,
      202,
    );
    const list = await post(mcp, {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/list",
    }, headers);
    assert.equal(list.status, 200);
    assert.match(JSON.stringify(await messagesOf(list)), /test_simple_text/);

    const health = await (await fetch(`${daemon.url}/health`)).json();
    assert.equal(health.servers.conformance.sessions, 1);

    const badVersion = await post(mcp, {
      jsonrpc: "2.0",
      id: 9,
      method: "tools/list",
    }, {
      ...headers,
      "mcp-protocol-version": "1999-01-01",
    });
    assert.equal(badVersion.status, 400);
    assert.match(
      (await badVersion.json()).error.message,
      /Unsupported protocol version: 1999-01-01/,
    );

    const unknown = await post(mcp, {
      jsonrpc: "2.0",
      id: 3,
      method: "tools/list",
    }, {
      ...headers,
      "mcp-session-id": "00000000-0000-0000-0000-000000000000",
    });
    assert.equal(unknown.status, 404);
    assert.equal((await unknown.json()).error.code, -32001);

    const deleted = await fetch(mcp, { method: "DELETE", headers });
    assert.equal(deleted.status, 200);
    await deleted.body?.cancel();
    const afterDelete = await post(mcp, {
      jsonrpc: "2.0",
      id: 4,
      method: "tools/list",
    }, headers);
    assert.equal(afterDelete.status, 404);
    await afterDelete.body?.cancel();
    const healthAfter = await (await fetch(`${daemon.url}/health`)).json();
    assert.equal(healthAfter.servers.conformance.sessions, 0);

    // Stateless: no initialize, no session; the answer comes back as plain JSON.
    const stateless = await post(mcp, {
      jsonrpc: "2.0",
      id: 5,
      method: "tools/call",
      params: { name: "test_simple_text", arguments: {} },
    });
    assert.equal(stateless.status, 200);
    assert.equal(stateless.headers.get("mcp-session-id"), null);
    assert.equal(stateless.headers.get("content-type"), "application/json");
    assert.match(
      JSON.stringify(await stateless.json()),
      /simple text response/,
    );

    const metrics = await fetch(`${daemon.url}/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(
      metrics.headers.get("content-type") ?? "",
      /^text\/plain; version=0\.0\.4/,
    );
    const text = await metrics.text();
    assert.match(text, /# TYPE agentd_tool_calls_total counter/);
    assert.match(
      text,
      /agentd_tool_calls_total\{server="conformance",tool="test_simple_text"\} 1\n/,
    );
    assert.match(
      text,
      /agentd_server_phase\{server="conformance",phase="running"\} 1\n/,
    );
    assert.match(
      text,
      /agentd_tool_duration_ms\{server="conformance",tool="test_simple_text",quantile="0\.95"\} /,
    );

    const get = await fetch(mcp, { headers: { accept: "text/event-stream" } });
    assert.equal(get.status, 405);
    assert.equal(get.headers.get("allow"), "POST");
    await get.body?.cancel();

    const notJson = await fetch(mcp, {
      method: "POST",
      headers: { "content-type": "application/json", accept: ACCEPT },
      body: "{not json",
    });
    assert.equal(notJson.status, 400);
    assert.equal((await notJson.json()).error.code, -32700);

    const noServer = await post(`${daemon.url}/mcp/nope`, INITIALIZE);
    assert.equal(noServer.status, 404);
    assert.equal((await noServer.json()).error.code, "not_found");
  });
});

Deno.test("http: the SDK client resumes a stream the server closed mid-call (Last-Event-ID)", async () => {
  await withDaemon([], {}, async (daemon) => {
    const seen: { method: string; lastEventId: string | null }[] = [];
    const transport = new StreamableHTTPClientTransport(
      new URL(`${daemon.url}/mcp/conformance`),
      {
        fetch: (input, init) => {
          const headers = new Headers(init?.headers);
          seen.push({
            method: init?.method ?? "GET",
            lastEventId: headers.get("last-event-id"),
          });
          return fetch(input, init);
        },
      },
    );
    const client = new Client({ name: "resume-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      assert.ok(transport.sessionId);
      const result = await client.callTool({
        name: "test_reconnection",
        arguments: {},
      });
      assert.match(
        JSON.stringify(result.content),
        /Reconnection test completed/,
      );
      assert.ok(
        seen.some((request) =>
          request.method === "GET" && request.lastEventId !== null
        ),
        `expected a GET with Last-Event-ID, saw ${JSON.stringify(seen)}`,
      );
    } finally {
      await transport.terminateSession();
      await client.close();
    }
  });
});

Deno.test("http: bad Host or Origin gets 403 on every path; 2 MiB bodies get 413", async () => {
  await withDaemon([], {}, async (daemon) => {
    const mcpHeaders = { "content-type": "application/json", accept: ACCEPT };
    const body = JSON.stringify(INITIALIZE);
    for (
      const path of [
        "/mcp/conformance",
        "/mcp",
        "/health",
        "/mcp/nope",
        "/elsewhere",
      ]
    ) {
      for (const method of ["POST", "GET", "DELETE"]) {
        const badHost = await rawRequest(daemon.port, {
          method,
          path,
          headers: { ...mcpHeaders, host: "evil.example" },
          body: method === "POST" ? body : undefined,
        });
        assert.equal(badHost.status, 403, `Host on ${method} ${path}`);
        assert.equal(JSON.parse(badHost.body).error.code, "forbidden");
      }
      const rebound = await rawRequest(daemon.port, {
        method: "POST",
        path,
        headers: {
          ...mcpHeaders,
          host: `evil.example:${daemon.port}`,
          origin: `http://evil.example:${daemon.port}`,
        },
        body,
      });
      assert.equal(rebound.status, 403, `rebinding on ${path}`);
      const badOrigin = await post(`${daemon.url}${path}`, INITIALIZE, {
        origin: "http://evil.example",
      });
      assert.equal(badOrigin.status, 403, `Origin on ${path}`);
      assert.equal((await badOrigin.json()).error.code, "forbidden");
    }
    const goodHost = await rawRequest(daemon.port, {
      method: "POST",
      path: "/mcp/conformance",
      headers: { ...mcpHeaders, host: `localhost:${daemon.port}` },
      body,
    });
    assert.equal(goodHost.status, 200);
    const localOrigin = await post(
      `${daemon.url}/mcp/conformance`,
      INITIALIZE,
      {
        origin: "http://localhost:3000",
      },
    );
    assert.equal(localOrigin.status, 200);
    await localOrigin.body?.cancel();

    const big = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "ping",
      params: { pad: "x".repeat(2 * 1024 * 1024) },
    });
    const tooLarge = await fetch(`${daemon.url}/mcp/conformance`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: ACCEPT },
      body: big,
    });
    assert.equal(tooLarge.status, 413);
    assert.equal((await tooLarge.json()).error.code, "payload_too_large");

    // Streamed without Content-Length: counted as it arrives.
    const bytes = new TextEncoder().encode(big);
    const streamed = await fetch(`${daemon.url}/mcp/conformance`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: ACCEPT },
      body: new ReadableStream({
        start(controller) {
          for (let i = 0; i < bytes.length; i += 65536) {
            controller.enqueue(bytes.subarray(i, i + 65536));
          }
          controller.close();
        },
      }),
    });
    assert.equal(streamed.status, 413);
    await streamed.body?.cancel();

    const health = await fetch(`${daemon.url}/health`);
    assert.equal(health.status, 200, "the daemon still serves after rejecting");
    await health.body?.cancel();
  });
});

Deno.test("http: off loopback without a token agentd refuses to start", async () => {
  await using dir = await tempDir();
  const result = await runCli([
    "serve",
    "--host",
    "0.0.0.0",
    "--port",
    "0",
    "--data-dir",
    dir.path,
  ]);
  assert.notEqual(result.code, 0);
  assert.match(
    result.stderr,
    /refusing to listen on 0\.0\.0\.0 without a token/,
  );
  assert.match(result.stderr, /AGENTD_TOKEN/);
});

Deno.test("http: with a token every request needs it (401 without), and it never reaches the logs", async () => {
  const token = "tok_" + crypto.randomUUID().replaceAll("-", "");
  await withDaemon(["--host", "0.0.0.0", "--log-level", "debug"], {
    AGENTD_TOKEN: token,
  }, async (daemon) => {
    for (const path of ["/health", "/mcp/conformance", "/nothing"]) {
      const anonymous = await post(`${daemon.url}${path}`, INITIALIZE);
      assert.equal(anonymous.status, 401, path);
      assert.equal((await anonymous.json()).error.code, "unauthorized");
      const wrong = await post(`${daemon.url}${path}`, INITIALIZE, {
        authorization: "Bearer wrong-token-123456",
      });
      assert.equal(wrong.status, 401, path);
      await wrong.body?.cancel();
    }
    const health = await fetch(`${daemon.url}/health`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(health.status, 200);
    await health.body?.cancel();

    const transport = new StreamableHTTPClientTransport(
      new URL(`${daemon.url}/mcp/conformance`),
      {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      },
    );
    const client = new Client({ name: "token-test", version: "1.0.0" });
    await client.connect(transport);
    const result = await client.callTool({
      name: "test_simple_text",
      arguments: {},
    });
    assert.equal(result.isError, undefined);
    await transport.terminateSession();
    await client.close();
    assert.ok(
      !JSON.stringify(daemon.logs).includes(token),
      "the token must not be logged",
    );
  });
});

Deno.test("http: an agent token binds the caller; its session cannot be used by anyone else", async () => {
  const alice = "alice_" + crypto.randomUUID().replaceAll("-", "");
  const bob = "bob_" + crypto.randomUUID().replaceAll("-", "");
  const operator = "op_" + crypto.randomUUID().replaceAll("-", "");
  const env = {
    AGENTD_TOKEN: operator,
    AGENTD_AGENT_TOKENS: JSON.stringify({ alice, bob }),
  };
  await withDaemon([], env, async (daemon) => {
    const mcp = `${daemon.url}/mcp/conformance`;
    async function whoami(headers: Record<string, string>): Promise<string> {
      const transport = new StreamableHTTPClientTransport(new URL(mcp), {
        requestInit: { headers },
      });
      const client = new Client({ name: "whoami", version: "1.0.0" });
      await client.connect(transport);
      try {
        const result = await client.callTool({ name: "whoami", arguments: {} });
        return JSON.stringify(result.content);
      } finally {
        await transport.terminateSession();
        await client.close();
      }
    }
    assert.match(
      await whoami({ authorization: `Bearer ${alice}` }),
      /\{\\"agent\\":\\"alice\\"\}/,
    );
    assert.match(
      await whoami({ authorization: `Bearer ${operator}` }),
      /"text":"\{\}"/,
      "the daemon token: an unbound caller (the operator)",
    );
    const anonymous = await post(mcp, INITIALIZE);
    assert.equal(anonymous.status, 401, "no token is not the operator");
    await anonymous.body?.cancel();

    const wrong = await post(mcp, INITIALIZE, {
      authorization: "Bearer not-a-known-token-1234",
    });
    assert.equal(wrong.status, 401);
    await wrong.body?.cancel();

    const init = await post(mcp, INITIALIZE, {
      authorization: `Bearer ${alice}`,
    });
    const session = init.headers.get("mcp-session-id");
    assert.ok(session);
    await init.body?.cancel();
    const list = { jsonrpc: "2.0", id: 2, method: "tools/list" };
    const intruders: Record<string, string>[] = [
      { authorization: `Bearer ${operator}` },
      { authorization: `Bearer ${bob}` },
    ];
    for (const headers of intruders) {
      const hijack = await post(mcp, list, {
        ...headers,
        "mcp-session-id": session,
      });
      assert.equal(hijack.status, 403);
      assert.match(
        (await hijack.json()).error.message,
        /opened by another identity/,
      );
    }
    const own = await post(mcp, list, {
      authorization: `Bearer ${alice}`,
      "mcp-session-id": session,
    });
    assert.equal(own.status, 200);
    await own.body?.cancel();
    assert.ok(
      !JSON.stringify(daemon.logs).includes(alice),
      "agent tokens are never logged",
    );
  });
});
