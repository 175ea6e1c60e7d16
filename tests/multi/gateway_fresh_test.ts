// Two gateways on one PostgreSQL store: a server registered or unregistered on
// A is what B's very next read shows (list_servers, get_server_health,
// tools/list, /admin), with no other request in between
// (docs/multi_daemon.md). No health round helps: the cluster sets it to 1 h.

import assert from "node:assert/strict";
import { z } from "zod";
import { pgTestIgnore } from "../pg_server.ts";
import {
  adminView,
  call,
  callJson,
  gatewayClient,
  startRecordingServer,
  textOf,
} from "../tools/gateway/upstreams.ts";
import { startCluster } from "./cluster.ts";

const Servers = z.object({
  servers: z.array(z.object({ name: z.string(), tools: z.array(z.string()) })),
});
Deno.test({
  name:
    "multi: B's next gateway read shows what A registered or unregistered a moment ago",
  ignore: pgTestIgnore(),
  async fn(t) {
    await using cluster = await startCluster(2);
    const [A, B] = cluster.daemons;
    await using recorder = startRecordingServer();
    await using clientA = await gatewayClient(A.url);
    await using clientB = await gatewayClient(B.url);
    // One URL per registration: a URL already registered is refused.
    const register = (name: string) =>
      callJson(clientA, "register_server", {
        name,
        url: `${recorder.url}?as=${name}`,
      });
    const unregister = (name: string) =>
      callJson(clientA, "unregister_server", { name });
    const listed = async () =>
      Servers.parse(await callJson(clientB, "list_servers")).servers
        .map((server) => server.name);
    const health = (name: string) =>
      call(clientB, "get_server_health", { name });
    const toolNames = async () =>
      (await clientB.listTools()).tools.map((tool) => tool.name);
    const adminNames = async () =>
      (await adminView(B.url)).servers.map((server) => server.name);

    await t.step("list_servers", async () => {
      await register("one");
      assert.ok((await listed()).includes("one"));
      await unregister("one");
      assert.ok(!(await listed()).includes("one"));
    });

    await t.step("get_server_health", async () => {
      await register("two");
      const up = await health("two");
      assert.notEqual(up.isError, true, textOf(up));
      assert.equal(up.structuredContent?.state, "healthy", textOf(up));
      await unregister("two");
      const gone = await health("two");
      assert.equal(gone.isError, true, textOf(gone));
      assert.match(textOf(gone), /No server named "two"/);
    });

    await t.step("tools/list", async () => {
      await register("three");
      assert.ok((await toolNames()).includes("three__whoami"));
      await unregister("three");
      assert.ok(!(await toolNames()).includes("three__whoami"));
    });

    await t.step("/admin", async () => {
      await register("four");
      assert.ok((await adminNames()).includes("four"));
      await unregister("four");
      assert.ok(!(await adminNames()).includes("four"));
    });
  },
});
