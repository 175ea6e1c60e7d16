// An upstream's resources and prompts through the gateway: listed (prompts
// as <server>__<prompt>), read and got on the upstream that listed them, and
// a resource or prompt the upstream adds at run time reaches the gateway's
// clients as the gateway's own resources/ and prompts/list_changed. What an
// agent may read of them: tests/security/gateway_resources_test.ts.

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type Client,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
} from "../../../platform/mcp_sdk.ts";
import { spawnServe, tempDir, waitFor } from "../../helpers.ts";
import {
  callJson,
  gatewayClient,
  startListingServer,
  writeConfig,
} from "./upstreams.ts";

/** Counts the resources/ and prompts/list_changed notifications `client` receives. */
function listChanges(client: Client): { resources: number; prompts: number } {
  const seen = { resources: 0, prompts: 0 };
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
    seen.resources++;
  });
  client.setNotificationHandler(PromptListChangedNotificationSchema, () => {
    seen.prompts++;
  });
  return seen;
}

async function resourceUris(client: Client): Promise<string[]> {
  return (await client.listResources()).resources.map((listed) => listed.uri);
}

async function promptNames(client: Client): Promise<string[]> {
  return (await client.listPrompts()).prompts.map((listed) => listed.name);
}

Deno.test("list changes: an upstream's new resource and prompt reach gateway clients, who list, read and get them", async () => {
  await using dir = await tempDir();
  const config = await writeConfig(dir.path, { health_interval_ms: 200 });
  const daemon = await spawnServe(join(dir.path, "data"), {
    extra: ["--config", config],
  });
  try {
    await using upstream = startListingServer();
    await using client = await gatewayClient(daemon.url);
    const capabilities = client.getServerCapabilities();
    assert.equal(capabilities?.resources?.listChanged, true);
    assert.equal(capabilities?.prompts?.listChanged, true);
    const changes = listChanges(client);

    // A registration announces its resources and prompts.
    await callJson(client, "register_server", {
      name: "listing",
      url: upstream.url,
    });
    await waitFor(() => changes, (seen) => seen.resources >= 1);
    await waitFor(() => changes, (seen) => seen.prompts >= 1);
    assert.ok((await resourceUris(client)).includes("listing://first"));
    assert.ok((await promptNames(client)).includes("listing__first"));
    assert.ok(!(await resourceUris(client)).includes("listing://second"));

    // The upstream adds a resource and a prompt and says so: the gateway's clients hear it.
    const before = { ...changes };
    upstream.addResource("second");
    await waitFor(() => changes, (seen) => seen.resources > before.resources);
    upstream.addPrompt("second");
    await waitFor(() => changes, (seen) => seen.prompts > before.prompts);

    const uris = await resourceUris(client);
    assert.ok(uris.includes("listing://second"), uris.join(", "));
    const read = await client.readResource({ uri: "listing://second" });
    assert.deepEqual(read.contents, [{
      uri: "listing://second",
      mimeType: "text/plain",
      text: "resource second",
    }]);

    const prompts = await client.listPrompts();
    const second = prompts.prompts.find((listed) =>
      listed.name === "listing__second"
    );
    assert.ok(second, prompts.prompts.map((listed) => listed.name).join(", "));
    assert.equal(second.description, "Prompt second");
    assert.deepEqual(second.arguments?.map((argument) => argument.name), [
      "topic",
    ]);
    const got = await client.getPrompt({
      name: "listing__second",
      arguments: { topic: "gateways" },
    });
    assert.deepEqual(got.messages, [{
      role: "user",
      content: { type: "text", text: "prompt second for gateways" },
    }]);

    // The gateway relays no resources/updated: it takes no subscription it would not keep.
    await assert.rejects(
      client.subscribeResource({ uri: "listing://second" }),
      /no subscriptions/,
    );

    // A URI no upstream listed is refused, not passed on.
    await assert.rejects(
      client.readResource({ uri: "listing://never-listed" }),
      /not found/i,
    );

    // Removing the registration: told, and its resources and prompts are gone.
    const beforeRemoval = { ...changes };
    await callJson(client, "unregister_server", { name: "listing" });
    await waitFor(
      () => changes,
      (seen) =>
        seen.resources > beforeRemoval.resources &&
        seen.prompts > beforeRemoval.prompts,
    );
    assert.ok(!(await resourceUris(client)).includes("listing://first"));
    assert.ok(!(await promptNames(client)).includes("listing__first"));
  } finally {
    assert.equal((await daemon.stop()).code, 0);
  }
});
