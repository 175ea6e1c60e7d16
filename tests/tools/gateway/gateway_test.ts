// The gateway end to end: `agentd serve` with real upstreams from npm
// (server-everything over stdio and streamable HTTP, server-filesystem over
// stdio) and the built-in memory server, driven through /mcp with the SDK.

import assert from "node:assert/strict";
import { join } from "node:path";
import { ToolListChangedNotificationSchema } from "../../../platform/mcp_sdk.ts";
import { logged, spawnServe, tempDir, waitFor } from "../../helpers.ts";
import {
  adminView,
  call,
  callJson,
  EVERYTHING,
  FILESYSTEM,
  gatewayClient,
  startEverythingHttp,
  startRecordingServer,
  startWebhook,
  stateOf,
  textOf,
  writeConfig,
} from "./upstreams.ts";

const OWN_TOOLS = [
  "list_servers",
  "register_server",
  "unregister_server",
  "route_tool_call",
  "broadcast_tool_call",
  "get_server_health",
  "get_server_tools",
  "discover_servers",
];
const LONG = "filesystem-with-a-deliberately-long-name";

Deno.test("gateway: stdio, HTTP, filesystem and built-in upstreams behind /mcp; a killed stdio upstream restarts", async () => {
  await using dir = await tempDir();
  const files = join(dir.path, "files");
  await Deno.mkdir(files);
  await Deno.writeTextFile(join(files, "note.txt"), "hello from disk");
  await using http = await startEverythingHttp();
  const config = await writeConfig(dir.path, {
    health_interval_ms: 300,
    upstreams: {
      everything: { command: "node", args: [EVERYTHING, "stdio"] },
      "everything-http": { url: http.url },
      [LONG]: {
        command: "node",
        args: [FILESYSTEM, files],
        tools: ["read_text_file", "list_directory_with_sizes"],
      },
    },
  });
  const daemon = await spawnServe(join(dir.path, "data"), {
    extra: ["--config", config],
  });
  try {
    await using client = await gatewayClient(daemon.url);
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    assert.deepEqual(names.slice(0, 8), OWN_TOOLS);
    const aggregate = names.slice(8);
    assert.deepEqual(aggregate, [...aggregate].sort(), "sorted");
    for (
      const name of [
        "everything__echo",
        "everything-http__echo",
        "memory__store_memory",
        `${LONG}__read_text_file`,
      ]
    ) assert.ok(names.includes(name), `${name} in ${names.join(", ")}`);
    // The registration's tool filter holds; the long name was shortened.
    const fsTools = names.filter((name) => name.startsWith(LONG));
    assert.equal(fsTools.length, 2, fsTools.join(", "));
    assert.ok(names.every((name) => name.length <= 64));
    const view = await adminView(daemon.url);
    const shortened = view.tools.find((tool) => tool.shortened);
    assert.ok(shortened, "a shortened name in /admin");
    assert.equal(shortened.tool, "list_directory_with_sizes");
    assert.equal(shortened.group, LONG);

    // Calls reach each upstream.
    const echo = await call(client, "everything__echo", {
      message: "via stdio",
    });
    assert.equal(textOf(echo), "Echo: via stdio");
    assert.equal(echo._meta?.["io.agentd/upstream"], "everything");
    const echoHttp = await call(client, "everything-http__echo", {
      message: "via http",
    });
    assert.equal(textOf(echoHttp), "Echo: via http");
    const read = await call(client, `${LONG}__read_text_file`, {
      path: join(files, "note.txt"),
    });
    assert.match(textOf(read), /hello from disk/);
    const listed = await call(client, shortened.name, { path: files });
    assert.match(textOf(listed), /note\.txt/);
    await callJson(client, "memory__store_memory", {
      namespace: "gw",
      key: "k",
      value: "through the gateway",
    });
    const back = await callJson(client, "memory__retrieve_memory", {
      namespace: "gw",
      key: "k",
    });
    assert.match(JSON.stringify(back), /through the gateway/);
    // An upstream's own validation errors come back as results, not failures.
    const bad = await call(client, "everything__echo", { nope: 1 });
    assert.equal(bad.isError, true);
    // route_tool_call by server and bare tool name.
    const routed = await call(client, "route_tool_call", {
      server: "everything-http",
      tool: "get-sum",
      args: { a: 2, b: 3 },
    });
    assert.match(textOf(routed), /5/);

    // Kill the stdio upstream: it is marked down, alerted, and restarted.
    // The pid and restart count are read just before the kill, from a
    // healthy upstream, so a restart earlier in the test cannot mislead.
    const beforeView = await waitFor(
      () => adminView(daemon.url),
      (now) =>
        now.servers.some((s) =>
          s.name === "everything" && s.state === "healthy" && s.pid
        ),
    );
    const before = beforeView.servers.find((server) =>
      server.name === "everything"
    );
    assert.ok(before?.pid, "stdio upstream has a pid");
    Deno.kill(before.pid, "SIGKILL");
    await waitFor(
      () => daemon.logs,
      (logs) =>
        logs.some((line) =>
          line.event === "alert" && line.upstream === "everything" &&
          line.state === "unhealthy"
        ),
    );
    const after = await waitFor(
      () => adminView(daemon.url),
      (now) => {
        const server = now.servers.find((s) => s.name === "everything");
        return server?.state === "healthy" &&
          server.restarts > before.restarts && server.pid !== null &&
          server.pid !== before.pid;
      },
      15_000,
    );
    const restarted = after.servers.find((s) => s.name === "everything");
    assert.notEqual(restarted?.pid, before.pid);
    assert.equal(
      textOf(await call(client, "everything__echo", { message: "again" })),
      "Echo: again",
    );
  } finally {
    assert.equal((await daemon.stop()).code, 0);
  }
  assert.deepEqual(daemon.stray, [], "only JSON lines on stderr");
});

Deno.test("gateway: a dead replica is routed around, alerted and brought back; a lone upstream's tools leave and return", async () => {
  await using dir = await tempDir();
  await using webhook = startWebhook();
  await using a = await startEverythingHttp();
  await using b = await startEverythingHttp();
  let solo = await startEverythingHttp();
  const config = await writeConfig(dir.path, {
    health_interval_ms: 300,
    broadcast_timeout_ms: 1000,
    alert_webhook: webhook.url,
    upstreams: {
      "ev-a": { url: a.url, group: "everything" },
      "ev-b": { url: b.url, group: "everything" },
      solo: { url: solo.url },
    },
  });
  const daemon = await spawnServe(join(dir.path, "data"), {
    extra: ["--config", config],
  });
  try {
    await using client = await gatewayClient(daemon.url);
    let changes = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes++;
    });
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    assert.ok(names.includes("everything__echo"));
    assert.ok(!names.some((name) => name.startsWith("ev-a__")));
    // Round robin over the healthy replicas.
    const served = new Set<unknown>();
    for (let i = 0; i < 4; i++) {
      const result = await call(client, "everything__echo", { message: "x" });
      served.add(result._meta?.["io.agentd/upstream"]);
    }
    assert.deepEqual([...served].sort(), ["ev-a", "ev-b"]);
    // A registration is its own group: the name of a configured group is taken.
    const joined = await call(client, "register_server", {
      name: "everything",
      url: solo.url,
    });
    assert.equal(joined.isError, true);
    assert.match(
      textOf(joined),
      /"everything" is already registered \(config\)/,
    );

    // ev-a dies: within a check interval it is unhealthy everywhere.
    await a.kill();
    const health = await waitFor(
      () => callJson(client, "get_server_health", { name: "ev-a" }),
      (value) => value.state === "unhealthy",
      5000,
    );
    assert.match(
      String(health.last_error),
      /connection refused|connection reset|fetch|error/i,
    );
    assert.equal(stateOf(await adminView(daemon.url), "ev-a"), "unhealthy");
    for (let i = 0; i < 3; i++) {
      const result = await call(client, "everything__echo", { message: "y" });
      assert.equal(textOf(result), "Echo: y");
      assert.equal(result._meta?.["io.agentd/upstream"], "ev-b");
    }
    // Asked for ev-a by name, the replica answers.
    const rerouted = await call(client, "route_tool_call", {
      server: "ev-a",
      tool: "echo",
      args: { message: "z" },
    });
    assert.equal(rerouted._meta?.["io.agentd/upstream"], "ev-b");
    await logged(
      daemon.logs,
      (line) =>
        line.event === "alert" && line.upstream === "ev-a" &&
        line.level === "warn",
    );
    await waitFor(
      () => webhook.received,
      (received) =>
        received.some((alert) =>
          alert.event === "upstream_down" && alert.upstream === "ev-a"
        ),
    );

    // broadcast with one upstream down: the others answer, the failure is reported.
    const broadcast = await call(client, "broadcast_tool_call", {
      tool: "echo",
      args: { message: "all" },
    });
    assert.notEqual(broadcast.isError, true, textOf(broadcast));
    const body = broadcast.structuredContent as {
      succeeded: number;
      failed: number;
      results: { server: string; status: string; error?: string }[];
    };
    assert.equal(body.succeeded, 2);
    assert.equal(body.failed, 1);
    const down = body.results.find((result) => result.server === "ev-a");
    assert.equal(down?.status, "down");
    assert.match(down?.error ?? "", /unhealthy since/);

    // Each upstream has its own timeout; slow ones are reported as such.
    const slow = await call(client, "broadcast_tool_call", {
      tool: "trigger-long-running-operation",
      args: { duration: 4, steps: 2 },
    });
    const slowBody = slow.structuredContent as typeof body;
    assert.equal(slow.isError, true, "none succeeded");
    assert.deepEqual(
      slowBody.results.map((result) => [result.server, result.status]),
      [["ev-a", "down"], ["ev-b", "timeout"], ["solo", "timeout"]],
    );
    assert.match(
      slowBody.results[1].error ?? "",
      /timed out after 1000 ms/,
    );
    // A slow answer is not an outage.
    const stillUp = await adminView(daemon.url);
    assert.equal(stateOf(stillUp, "ev-b"), "healthy");
    assert.ok(
      !daemon.logs.some((line) =>
        line.event === "alert" && line.upstream === "ev-b"
      ),
    );

    // The lone upstream dies: its tools leave the list, calls say why.
    await solo.kill();
    await waitFor(
      async () => (await client.listTools()).tools.map((tool) => tool.name),
      (now) => !now.includes("solo__echo"),
      5000,
    );
    await waitFor(() => changes, (count) => count > 0, 5000);
    const viaRoute = await call(client, "route_tool_call", {
      server: "solo",
      tool: "echo",
      args: { message: "?" },
    });
    assert.equal(viaRoute.isError, true);
    assert.match(
      textOf(viaRoute),
      /"solo" is unhealthy since \d{4}-\d\d-\d\dT.*no replica/,
    );

    // Both come back on their ports: healthy again, tools return.
    await using a2 = await startEverythingHttp(a.port);
    solo = await startEverythingHttp(solo.port);
    await waitFor(
      () => adminView(daemon.url),
      (view) =>
        stateOf(view, "ev-a") === "healthy" &&
        stateOf(view, "solo") === "healthy",
      10_000,
    );
    const back = (await client.listTools()).tools.map((tool) => tool.name);
    assert.ok(back.includes("solo__echo"));
    assert.equal(
      textOf(await call(client, "solo__echo", { message: "back" })),
      "Echo: back",
    );
    const tools = await callJson(client, "get_server_tools", { name: "ev-a" });
    assert.ok(JSON.stringify(tools).includes("everything__echo"));
    await waitFor(
      () => webhook.received,
      (received) =>
        received.some((alert) =>
          alert.event === "upstream_recovered" && alert.upstream === "ev-a"
        ),
    );
    assert.equal(a2.port, a.port);
  } finally {
    await solo.kill();
    assert.equal((await daemon.stop()).code, 0);
  }
});

Deno.test("gateway: register_server rejects bad input whole, and registrations survive a restart", async () => {
  await using dir = await tempDir();
  await using upstream = await startEverythingHttp();
  const data = join(dir.path, "data");
  let daemon = await spawnServe(data);
  try {
    await using client = await gatewayClient(daemon.url);
    const before = await callJson(client, "list_servers");
    const closed = await startEverythingHttp();
    await closed.kill();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ name: "x", url: "not a url" }, /Invalid url "not a url"/],
      [{ name: "x", url: "ftp://127.0.0.1/mcp" }, /only http and https/],
      [{ name: "memory", url: upstream.url }, /"memory" is already registered/],
      [{ name: "Bad Name", url: upstream.url }, /Invalid name/],
      [{ name: "a__b", url: upstream.url }, /Invalid name/],
      [
        { name: "x", url: closed.url },
        /Cannot reach .*connection refused.*Nothing was registered/,
      ],
      [
        { name: "x", url: upstream.url, tools: ["echo", "no-such-tool"] },
        /no tool "no-such-tool".*Nothing was registered/,
      ],
    ];
    for (const [args, message] of cases) {
      const result = await call(client, "register_server", args);
      assert.equal(result.isError, true, JSON.stringify(args));
      assert.match(textOf(result), message);
    }
    const missing = await call(client, "register_server", { name: "x" });
    assert.equal(missing.isError, true);
    assert.match(textOf(missing), /url/);
    assert.deepEqual(await callJson(client, "list_servers"), before);

    await callJson(client, "register_server", {
      name: "reg",
      url: upstream.url,
      tools: ["echo"],
    });
    const duplicate = await call(client, "register_server", {
      name: "reg",
      url: upstream.url,
    });
    assert.match(textOf(duplicate), /already registered/);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    assert.deepEqual(names.filter((name) => name.startsWith("reg__")), [
      "reg__echo",
    ]);
    const builtin = await call(client, "unregister_server", { name: "memory" });
    assert.match(textOf(builtin), /built-in/);

    // Every other tool: a clear error naming what is wrong, and nothing changes.
    const listed = await callJson(client, "list_servers");
    const bad: [string, Record<string, unknown>, RegExp][] = [
      [
        "route_tool_call",
        { server: "nowhere", tool: "echo", args: {} },
        /No upstream or group "nowhere"\. Known: .*memory/,
      ],
      [
        "route_tool_call",
        { server: "reg", tool: "nope", args: {} },
        /Unknown tool "nope" on "reg"\. Its tools: echo/,
      ],
      ["route_tool_call", { server: "reg", tool: "echo" }, /args/],
      [
        "broadcast_tool_call",
        { tool: "no-such-tool", args: {} },
        /No upstream has a tool "no-such-tool"/,
      ],
      ["get_server_health", { name: "nowhere" }, /No server named "nowhere"/],
      ["get_server_tools", { name: "nowhere" }, /No server named "nowhere"/],
      [
        "unregister_server",
        { name: "nowhere" },
        /No server named "nowhere"\. Registered with register_server: reg/,
      ],
      ["list_servers", { extra: true }, /extra/],
    ];
    for (const [tool, args, message] of bad) {
      const result = await call(client, tool, args);
      assert.equal(result.isError, true, `${tool} ${JSON.stringify(args)}`);
      assert.match(textOf(result), message);
    }
    assert.deepEqual(await callJson(client, "list_servers"), listed);
  } finally {
    assert.equal((await daemon.stop()).code, 0);
  }

  daemon = await spawnServe(data);
  try {
    await using client = await gatewayClient(daemon.url);
    const listed = await callJson(client, "list_servers");
    const reg = (listed.servers as { name: string; source: string }[])
      .find((server) => server.name === "reg");
    assert.equal(reg?.source, "registered");
    assert.equal(
      textOf(await call(client, "reg__echo", { message: "persisted" })),
      "Echo: persisted",
    );
    await callJson(client, "unregister_server", { name: "reg" });
    const gone = await call(client, "get_server_health", { name: "reg" });
    assert.equal(gone.isError, true);
  } finally {
    assert.equal((await daemon.stop()).code, 0);
  }

  daemon = await spawnServe(data);
  try {
    await using client = await gatewayClient(daemon.url);
    const listed = JSON.stringify(await callJson(client, "list_servers"));
    assert.doesNotMatch(listed, /"reg"/);
  } finally {
    assert.equal((await daemon.stop()).code, 0);
  }
});

Deno.test("gateway: upstream credentials from config; the caller's token only where passed through", async () => {
  await using dir = await tempDir();
  await using recorder = startRecordingServer();
  const token = "daemon-token-0123456789abcdef";
  const upstreamSecret = "upstream-secret-0123456789";
  const config = await writeConfig(dir.path, {
    upstreams: {
      plain: { url: recorder.url, token_env: "RECORDER_TOKEN" },
      anonymous: { url: recorder.url },
      through: { url: recorder.url, pass_through_auth: true },
    },
  });
  const daemon = await spawnServe(join(dir.path, "data"), {
    extra: ["--config", config],
    env: { AGENTD_TOKEN: token, RECORDER_TOKEN: upstreamSecret },
  });
  try {
    await using client = await gatewayClient(daemon.url, token);
    assert.equal(
      textOf(await call(client, "plain__whoami")),
      `Bearer ${upstreamSecret}`,
    );
    assert.equal(textOf(await call(client, "anonymous__whoami")), "none");
    assert.equal(
      textOf(await call(client, "through__whoami")),
      `Bearer ${token}`,
    );
    const unauthorized = await fetch(`${daemon.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    await unauthorized.body?.cancel();
    assert.equal(unauthorized.status, 401);
  } finally {
    assert.equal((await daemon.stop()).code, 0);
  }
  const logs = JSON.stringify(daemon.logs);
  assert.ok(!logs.includes(upstreamSecret), "upstream secret never logged");
  assert.ok(!logs.includes(token), "daemon token never logged");
});

Deno.test("gateway: an agent's identity reaches built-in servers through /mcp", async () => {
  await using dir = await tempDir();
  const alice = "alice-token-0123456789abcdef";
  const daemon = await spawnServe(dir.path, {
    env: {
      AGENTD_TOKEN: "operator-token-0123456789abcdef",
      AGENTD_AGENT_TOKENS: JSON.stringify({ alice }),
    },
  });
  try {
    await using client = await gatewayClient(daemon.url, alice);
    await callJson(client, "memory__store_memory", {
      namespace: "alice",
      key: "mine",
      value: "ok",
    });
    const foreign = await call(client, "memory__store_memory", {
      namespace: "bob",
      key: "theirs",
      value: "no",
    });
    assert.equal(foreign.isError, true);
    assert.match(textOf(foreign), /alice|namespace/i);
  } finally {
    assert.equal((await daemon.stop()).code, 0);
  }
});

Deno.test("gateway: least_in_flight sends calls to the replica that is not busy", async () => {
  await using dir = await tempDir();
  await using a = await startEverythingHttp();
  await using b = await startEverythingHttp();
  const config = await writeConfig(dir.path, {
    balance: "least_in_flight",
    upstreams: {
      "ev-a": { url: a.url, group: "everything" },
      "ev-b": { url: b.url, group: "everything" },
    },
  });
  const daemon = await spawnServe(join(dir.path, "data"), {
    extra: ["--config", config],
  });
  try {
    await using client = await gatewayClient(daemon.url);
    const slow = call(client, "everything__trigger-long-running-operation", {
      duration: 2,
      steps: 2,
    });
    // Wait until the slow call is in flight on one replica.
    const busy = await waitFor(
      () => adminView(daemon.url),
      (view) => view.servers.some((server) => server.in_flight === 1),
    );
    const taken = busy.servers.find((server) => server.in_flight === 1)?.name;
    const idle = taken === "ev-a" ? "ev-b" : "ev-a";
    // Round robin would alternate; least in flight keeps choosing the idle one.
    for (let i = 0; i < 3; i++) {
      const result = await call(client, "everything__echo", { message: "q" });
      assert.equal(result._meta?.["io.agentd/upstream"], idle);
    }
    const done = await slow;
    assert.equal(done._meta?.["io.agentd/upstream"], taken);
  } finally {
    assert.equal((await daemon.stop()).code, 0);
  }
});
