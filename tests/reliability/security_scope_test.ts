// What a token reaches: an agent's token touches only its own memory
// namespace (an adversarial set of names: case, unicode look-alikes,
// separators, prefixes), at /mcp/memory and through the gateway, and never
// reads another's entries; screenshot paths cannot leave their roots
// (`..`, symbolic links, absolute paths); no token or sensitive value
// reaches the logs.

import assert from "node:assert/strict";
import { join } from "node:path";
import fc from "fast-check";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../platform/mcp_sdk.ts";
import { screenshotTarget } from "../../tools/browser-automation/screenshot_paths.ts";
import { ToolError } from "../../tools/kit/mod.ts";
import { resultText } from "../agents/stack.ts";
import { spawnDaemon, tempDir } from "../helpers.ts";

const ALICE = "alice-token-" + crypto.randomUUID();
const BOB = "bob-token-" + crypto.randomUUID();
const BOB_SECRET = "bob-sensitive-" + crypto.randomUUID();

/** Names that look like, contain, or are contained in "alice", but are not it. */
const ADVERSARIAL = [
  "Alice",
  "ALICE",
  "alicE",
  "alice ",
  " alice",
  "alice\u200b",
  "\u200balice",
  "\u0430lice", // Cyrillic а
  "al\u0131ce", // dotless ı
  "ａｌｉｃｅ", // fullwidth
  "alice\u0301",
  "alice/",
  "alice/bob",
  "alice/../bob",
  "alice:bob",
  "alice.bob",
  "alice_",
  "alice-x",
  "alicebob",
  "ali",
  "a",
  "bob",
  "Bob",
  "_shared",
  "*",
  "%",
  "..",
  "alice%2F..%2Fbob",
  "alice\\bob",
];

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: "scope", version: "1" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

Deno.test("security: an agent token reaches only its own memory namespace, directly and through the gateway", async () => {
  await using dir = await tempDir();
  const daemon = await spawnDaemon(
    ["serve", "--port", "0", "--data-dir", dir.path, "--log-level", "debug"],
    {
      env: {
        AGENTD_TOKEN: "operator-token-" + crypto.randomUUID(),
        AGENTD_AGENT_TOKENS: JSON.stringify({ alice: ALICE, bob: BOB }),
      },
    },
  );
  const clients: Client[] = [];
  try {
    const bob = await connect(`${daemon.url}/mcp/memory`, BOB);
    clients.push(bob);
    for (const [key, tags] of [["plain", []], ["secret", ["sensitive"]]]) {
      const stored = await bob.callTool({
        name: "store_memory",
        arguments: { namespace: "bob", key, value: BOB_SECRET, tags },
      });
      assert.notEqual(stored.isError, true, resultText(stored));
    }
    const direct = await connect(`${daemon.url}/mcp/memory`, ALICE);
    const gateway = await connect(`${daemon.url}/mcp`, ALICE);
    clients.push(direct, gateway);
    const own = await direct.callTool({
      name: "store_memory",
      arguments: { namespace: "alice", key: "k", value: "alice's own" },
    });
    assert.notEqual(own.isError, true, resultText(own));

    const calls = (namespace: string) =>
      [
        ["store_memory", { namespace, key: "k", value: "intrusion" }],
        ["retrieve_memory", { namespace, key: "plain" }],
        ["retrieve_memory", { namespace, key: "secret" }],
        ["update_memory", { namespace, key: "plain", value: "overwritten" }],
        ["delete_memory", { namespace, key: "plain" }],
        ["list_memories", { namespace }],
        ["search_memory", { namespace, query: "bob sensitive" }],
      ] as const;
    let denied = 0;
    for (const namespace of ADVERSARIAL) {
      for (const [name, args] of calls(namespace)) {
        for (
          const [client, prefix] of [[direct, ""], [
            gateway,
            "memory__",
          ]] as const
        ) {
          const result = await client.callTool({
            name: prefix + name,
            arguments: args,
          });
          const text = resultText(result);
          assert.equal(
            result.isError,
            true,
            `${prefix}${name} in ${
              JSON.stringify(namespace)
            } was allowed: ${text}`,
          );
          assert.ok(!text.includes(BOB_SECRET), "bob's value leaked");
          denied++;
        }
      }
    }
    // Calls without a namespace see only alice's own entries.
    for (
      const [name, args] of [
        ["list_memories", {}],
        ["search_memory", { query: "bob sensitive" }],
        ["cross_reference", { query: "bob sensitive" }],
        ["get_agent_context", {}],
      ] as const
    ) {
      const result = await direct.callTool({ name, arguments: args });
      assert.ok(
        !resultText(result).includes(BOB_SECRET),
        `${name} without a namespace showed bob's entries`,
      );
    }
    // Bob's entries are untouched.
    const still = await bob.callTool({
      name: "retrieve_memory",
      arguments: { namespace: "bob", key: "plain" },
    });
    assert.match(resultText(still), new RegExp(BOB_SECRET));
    assert.ok(denied >= ADVERSARIAL.length * 14);
  } finally {
    for (const client of clients) await client.close();
    assert.equal((await daemon.stop()).code, 0);
  }
  const logged = JSON.stringify(daemon.logs) + daemon.stray.join("\n");
  for (const secret of [ALICE, BOB, BOB_SECRET]) {
    assert.ok(
      !logged.includes(secret),
      "a token or sensitive value was logged",
    );
  }
});

Deno.test("security: screenshot paths cannot leave their roots (.., symbolic links, absolute paths)", async () => {
  await using root = await tempDir();
  await using outside = await tempDir();
  const allowed = join(root.path, "shots");
  await Deno.mkdir(join(allowed, "sub"), { recursive: true });
  await Deno.symlink(outside.path, join(allowed, "out-dir"));
  await Deno.symlink(join(outside.path, "f.png"), join(allowed, "out.png"));
  await Deno.symlink("..", join(allowed, "up"));
  const realAllowed = await Deno.realPath(allowed);
  const part = fc.constantFrom(
    "..",
    ".",
    "sub",
    "up",
    "out-dir",
    "out.png",
    "x.png",
    "",
    "%2e%2e",
    outside.path,
    "/etc",
    "/tmp",
  );
  await fc.assert(
    fc.asyncProperty(
      fc.array(part, { minLength: 1, maxLength: 6 }),
      fc.boolean(),
      async (parts, absolute) => {
        let requested = join(...parts);
        if (!requested.endsWith(".png")) requested += "/shot.png";
        if (absolute) requested = join(allowed, requested);
        let target: string;
        try {
          target = await screenshotTarget(requested, [allowed]);
        } catch (error) {
          assert.ok(error instanceof ToolError, String(error));
          return;
        }
        // Accepted: it must land inside the real root, through no link.
        assert.ok(
          target.startsWith(realAllowed + "/"),
          `${requested} → ${target}`,
        );
        const parent = target.slice(0, target.lastIndexOf("/"));
        const realParent = await Deno.realPath(parent).catch(() => parent);
        assert.ok(
          realParent.startsWith(realAllowed),
          `${requested} → ${realParent}`,
        );
      },
    ),
    { numRuns: 1_000 },
  );
  for (
    const escape of [
      "../x.png",
      "out-dir/x.png",
      "out.png",
      "up/x.png",
      "sub/../up/x.png",
      "/etc/x.png",
      `${outside.path}/x.png`,
    ]
  ) {
    await assert.rejects(
      screenshotTarget(escape, [allowed]),
      ToolError,
      escape,
    );
  }
});
