// What changes behind the gateway reaches its clients: an upstream's
// tools/list_changed, a registration and its removal, an upstream that goes
// down, each as the gateway's own notifications/tools/list_changed (the
// on-demand list stays the same, byte for byte); and progress relayed both
// ways on a routed call, over streamable HTTP and stdio upstreams.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  Client,
  StreamableHTTPClientTransport,
  ToolListChangedNotificationSchema,
} from "../../../platform/mcp_sdk.ts";
import { spawnServe, tempDir, waitFor } from "../../helpers.ts";
import {
  call,
  callJson,
  EVERYTHING,
  gatewayClient,
  startChangingServer,
  startEverythingHttp,
  textOf,
  writeConfig,
} from "./upstreams.ts";

/** Counts the tools/list_changed notifications `client` receives. */
function listChanges(client: Client): { count: number } {
  const seen = { count: 0 };
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    seen.count++;
  });
  return seen;
}

async function names(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((tool) => tool.name);
}

Deno.test("list changes: an upstream's new tool, a registration, its removal and an upstream going down reach gateway clients", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(dir.path, { health_interval_ms: 200 });
  const daemon = await spawnServe(join(dir.path, "data"), {
    extra: ["--config", config],
  });
  try {
    await using upstream = startChangingServer();
    await using client = await gatewayClient(daemon.url);
    const changes = listChanges(client);
    const lean = new Client({ name: "lean", version: "1.0.0" });
    await lean.connect(
      new StreamableHTTPClientTransport(
        new URL(`${daemon.url}/mcp?tools=on_demand`),
      ),
    );
    const leanChanges = listChanges(lean);
    const leanList = await lean.listTools();

    await callJson(client, "register_server", {
      name: "changing",
      url: upstream.url,
    });
    await waitFor(() => changes.count, (count) => count >= 1);
    assert.ok((await names(client)).includes("changing__first"));
    assert.ok(!(await names(client)).includes("changing__second"));

    // The upstream adds a tool and says so: the gateway's clients hear it.
    const before = changes.count;
    const leanBefore = leanChanges.count;
    upstream.addTool("second");
    await waitFor(() => changes.count, (count) => count > before);
    const now = await names(client);
    assert.ok(now.includes("changing__second"), now.join(", "));
    assert.equal(textOf(await call(client, "changing__second")), "second");
    // On demand: told too (to search again), and its list is unchanged, so
    // the client's cached prompt holds.
    await waitFor(() => leanChanges.count, (count) => count > leanBefore);
    assert.deepEqual(await lean.listTools(), leanList);
    const found = await lean.callTool({
      name: "search_tools",
      arguments: { query: "answers second" },
    });
    assert.match(JSON.stringify(found.structuredContent), /changing__second/);

    // Removing the registration: told, and its tools are gone.
    const beforeRemoval = changes.count;
    await callJson(client, "unregister_server", { name: "changing" });
    await waitFor(() => changes.count, (count) => count > beforeRemoval);
    assert.ok(
      !(await names(client)).some((name) => name.startsWith("changing__")),
    );

    // An upstream that goes down: told, its tools leave the list.
    const other = startChangingServer();
    await callJson(client, "register_server", {
      name: "other",
      url: other.url,
    });
    await waitFor(() => names(client), (list) => list.includes("other__first"));
    const beforeDown = changes.count;
    await other[Symbol.asyncDispose]();
    await waitFor(() => changes.count, (count) => count > beforeDown);
    assert.ok(!(await names(client)).includes("other__first"));
    await lean.close();
  } finally {
    assert.equal((await daemon.stop()).code, 0);
  }
});

interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

/** Calls `name` asking for progress; returns the upstream's reports and the result text. */
async function withProgress(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
): Promise<{ reports: Progress[]; text: string }> {
  const reports: Progress[] = [];
  const result = await client.callTool({ name, arguments: args }, undefined, {
    onprogress: (progress) => reports.push(progress),
  });
  // The kit's own reports (a quiet call's "<tool> is running", the last
  // "<tool> finished") come around the upstream's: these are the upstream's.
  const kit = new RegExp(`^${name} (is running|finished)$`);
  return {
    reports: reports.filter((report) => !kit.test(report.message ?? "")),
    text: JSON.stringify(result.content),
  };
}

Deno.test("progress through the gateway: the caller's token reaches HTTP and stdio upstreams, their reports reach the caller", async () => {
  await using dir = await tempDir();
  await using http = await startEverythingHttp();
  await using changing = startChangingServer();
  const config = await writeConfig(dir.path, {
    upstreams: {
      everything: { command: "node", args: [EVERYTHING, "stdio"] },
      "everything-http": { url: http.url },
      changing: { url: changing.url },
    },
  });
  const daemon = await spawnServe(join(dir.path, "data"), {
    extra: ["--config", config],
  });
  try {
    await using client = await gatewayClient(daemon.url);
    for (const upstream of ["everything", "everything-http"]) {
      const { reports, text } = await withProgress(
        client,
        `${upstream}__trigger-long-running-operation`,
        { duration: 0.3, steps: 3 },
      );
      assert.match(text, /Long running operation completed/);
      assert.deepEqual(
        reports.map((report) => [report.progress, report.total]),
        [[1, 3], [2, 3], [3, 3]],
        upstream,
      );
    }
    // The report's message comes through too; route_tool_call relays as well.
    const direct = await withProgress(client, "changing__slow");
    assert.deepEqual(direct.reports.map((report) => report.message), [
      "step 1 of 3",
      "step 2 of 3",
      "step 3 of 3",
    ]);
    const routed = await withProgress(client, "route_tool_call", {
      server: "changing",
      tool: "slow",
      args: {},
    });
    assert.equal(routed.reports.length, 3);
    assert.ok(changing.tokens.every((token) => token !== undefined));
    // Without a token of its own the caller hears nothing, and still gets the answer.
    const quiet = await call(client, "changing__slow");
    assert.equal(textOf(quiet), "done");
  } finally {
    assert.equal((await daemon.stop()).code, 0);
  }
});
