// A session is told resources/ or prompts/list_changed only when its own view
// changed: the gateway lists an agent only the upstreams it may read, so a
// change to another upstream is not news to that agent (nor a signal of what
// the operator registers). One server with run-time lists, one session per
// caller over in-process links, where notifications and answers share one
// ordered channel.

import assert from "node:assert/strict";
import {
  Client,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
} from "../../platform/mcp_sdk.ts";
import { createLogger } from "../../platform/log.ts";
import { MemoryStore } from "../../platform/store/memory.ts";
import type { Caller } from "../../platform/identity.ts";
import { HostedServer } from "../../tools/kit/host.ts";
import { defineServer, type ServerDeps } from "../../tools/kit/mod.ts";
import { connectInProcess } from "../../tools/kit/transport/sdk_server.ts";

Deno.test("list changes: a session hears of a change to what it may list, not of others'", async () => {
  // Operator-only entries, and entries every caller may list.
  const lists = { private: ["a"], shared: ["s"] };
  let deps: ServerDeps | undefined;
  const visible = (viewer: Caller) => [
    ...viewer.agent === undefined ? lists.private : [],
    ...lists.shared,
  ];
  const spec = defineServer<null>({
    id: "lists",
    namespace: "svc-lists",
    title: "Lists",
    version: "1.0.0",
    tools: [],
    dynamicLists: { resources: true, prompts: true },
    start(started) {
      deps = started;
      return Promise.resolve({
        context: null,
        dynamicResources: {
          listResources: (viewer) =>
            visible(viewer).map((name) => ({ uri: `x://${name}`, name })),
          hasResource: () => false,
          readResource: () => Promise.reject(new Error("not read here")),
        },
        dynamicPrompts: {
          listPrompts: (viewer) => visible(viewer).map((name) => ({ name })),
          hasPrompt: () => false,
          getPrompt: () => Promise.reject(new Error("not got here")),
        },
      });
    },
  });
  const host = await HostedServer.start(spec, {
    store: new MemoryStore(),
    log: createLogger({ sink: () => {} }),
    config: {},
    dataDir: "/nonexistent",
  });
  const session = async (caller: Caller) => {
    const client = new Client({ name: "viewer", version: "1.0.0" });
    const heard = { resources: 0, prompts: 0 };
    client.setNotificationHandler(
      ResourceListChangedNotificationSchema,
      () => void heard.resources++,
    );
    client.setNotificationHandler(
      PromptListChangedNotificationSchema,
      () => void heard.prompts++,
    );
    await client.connect(await connectInProcess(host, caller));
    return { client, heard };
  };
  const operator = await session({});
  const alice = await session({ agent: "alice" });
  const changed = async () => {
    deps?.resourcesChanged();
    deps?.promptsChanged();
    // Answers follow any notification sent before them on the same channel.
    await operator.client.ping();
    await alice.client.ping();
  };
  try {
    lists.private.push("b");
    await changed();
    assert.deepEqual(operator.heard, { resources: 1, prompts: 1 });
    assert.deepEqual(alice.heard, { resources: 0, prompts: 0 }, "not hers");

    lists.shared.push("t");
    await changed();
    assert.deepEqual(operator.heard, { resources: 2, prompts: 2 });
    assert.deepEqual(alice.heard, { resources: 1, prompts: 1 });
    assert.deepEqual(
      (await alice.client.listResources()).resources.map((r) => r.uri),
      ["x://s", "x://t"],
    );
  } finally {
    await operator.client.close();
    await alice.client.close();
    await host.stop(1000);
  }
});
