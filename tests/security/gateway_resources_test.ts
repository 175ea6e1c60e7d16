// Issue 36 (the gateway lists, reads and gets its upstreams' resources and
// prompts), as an attacker holding one agent's token: the policy judges tool
// calls only, so an agent reads no external upstream's resource or prompt
// with the registration's own credentials, by whatever way in: a listed
// URI, a prompt's gateway name, or a URI of the gateway's results template
// (`agentd://<server>/results/<id>`, which an upstream may answer unlisted);
// nor are they listed to it. Only the operator reads and lists them (or the
// upstream itself judges, under pass_through_auth).
// A real `agentd serve`, a real MCP SDK upstream registered over HTTP.

import assert from "node:assert/strict";
import { spawnServeWith, tempDir, waitFor } from "../helpers.ts";
import {
  callJson,
  gatewayClient,
  startListingServer,
} from "../tools/gateway/upstreams.ts";

const OPERATOR = "operator-token-0123456789-resources";
const ALICE = "alice-agent-token-0123456789-resources";

/** The text of a resources/read answer. */
function textsOf(result: { contents: unknown[] }): string[] {
  return result.contents.map((content) =>
    String(Reflect.get(Object(content), "text"))
  );
}

Deno.test("security gateway resources: an agent reads no external upstream's resources or prompts with the registration's credentials, by any way in", async () => {
  await using dir = await tempDir();
  const daemon = await spawnServeWith(dir.path, {
    token: OPERATOR,
    agent_tokens: { alice: ALICE },
    gateway: { health_interval_ms: 200 },
  });
  try {
    await using upstream = startListingServer();
    await using owner = await gatewayClient(daemon.url, OPERATOR);
    await callJson(owner, "register_server", {
      name: "listing",
      url: upstream.url,
    });
    await waitFor(
      async () =>
        (await owner.listResources()).resources.map((listed) => listed.uri),
      (uris) => uris.includes("listing://first"),
    );
    // The operator reads each: they exist, and answer with content.
    const kept = "agentd://listing/results/0f3c";
    assert.deepEqual(
      textsOf(await owner.readResource({ uri: "listing://first" })),
      ["resource first"],
    );
    assert.deepEqual(textsOf(await owner.readResource({ uri: kept })), [
      "kept 0f3c",
    ]);
    const prompt = await owner.getPrompt({
      name: "listing__first",
      arguments: { topic: "x" },
    });
    assert.equal(prompt.messages.length, 1);

    await using agent = await gatewayClient(daemon.url, ALICE);
    // Not even listed to her: a listing names what she cannot read (an
    // upstream's URIs may hold its host, paths or table names).
    const listed = await agent.listResources();
    assert.deepEqual(
      listed.resources.filter((resource) =>
        resource.uri.startsWith("listing:")
      ),
      [],
    );
    const prompts = await agent.listPrompts();
    assert.deepEqual(
      prompts.prompts.filter((listed) => listed.name.startsWith("listing__")),
      [],
    );
    await assert.rejects(
      agent.readResource({ uri: "listing://first" }),
      /read by the operator only/,
    );
    await assert.rejects(
      agent.getPrompt({ name: "listing__first", arguments: { topic: "x" } }),
      /read by the operator only/,
    );
    // The results template: the same rule, not the registration's connection.
    await assert.rejects(
      agent.readResource({ uri: kept }),
      /read by the operator only/,
    );
    // Other spellings reach no content either.
    for (
      const uri of [
        "LISTING://first",
        "listing://first/",
        "listing://first?x=1",
        "listing://FIRST",
        "agentd://LISTING/results/0f3c",
        "agentd://listing/results/0f3c/..",
        "agentd://listing/results/",
      ]
    ) {
      const read = agent.readResource({ uri });
      await assert.rejects(read, (error: Error) => {
        assert.doesNotMatch(error.message, /kept|resource first/);
        return true;
      }, uri);
    }
  } finally {
    assert.equal((await daemon.stop()).code, 0);
  }
});
