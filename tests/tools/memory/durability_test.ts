// Durability and encryption at rest: entries survive kill -9; sensitive
// values are not on disk in plaintext; the key file is private.

import assert from "node:assert/strict";
import { join } from "node:path";
import type { Client } from "../../../platform/mcp_sdk.ts";
import { type Daemon, spawnServe, tempDir } from "../../helpers.ts";
import { call as structured, connectMemory } from "./scenario.ts";

async function connect(daemon: Daemon): Promise<Client> {
  return (await connectMemory(daemon)).client;
}

Deno.test("memory durability: 1,000 entries survive kill -9 and a restart", async () => {
  await using dir = await tempDir();
  const first = await spawnServe(dir.path);
  const writer = await connect(first);
  for (let i = 0; i < 1000; i++) {
    await structured(writer, "store_memory", {
      namespace: "bulk",
      key: `entry-${String(i).padStart(4, "0")}`,
      value: `durable value number ${i}`,
      tags: i % 2 === 0 ? ["even"] : ["odd"],
    });
  }
  const killed = await first.stop("SIGKILL");
  assert.equal(killed.signal, "SIGKILL");
  await writer.close().catch(() => {});

  const second = await spawnServe(dir.path);
  const reader = await connect(second);
  try {
    const keys: string[] = [];
    let cursor: unknown;
    do {
      const page = await structured(reader, "list_memories", {
        namespace: "bulk",
        limit: 200,
        ...(typeof cursor === "string" ? { cursor } : {}),
      });
      for (const entry of page.entries as { key: string }[]) {
        keys.push(entry.key);
      }
      cursor = page.next_cursor;
    } while (typeof cursor === "string");
    assert.equal(keys.length, 1000);
    assert.equal(new Set(keys).size, 1000);
    const last = await structured(reader, "retrieve_memory", {
      namespace: "bulk",
      key: "entry-0999",
    });
    assert.equal(last.value, "durable value number 999");
    const odd = await structured(reader, "list_memories", {
      namespace: "bulk",
      tags: ["odd"],
      limit: 200,
    });
    assert.equal(odd.count, 200);
    const hit = await structured(reader, "search_memory", {
      namespace: "bulk",
      query: "number 777",
    });
    assert.equal(
      (hit.hits as { key: string }[])[0].key,
      "entry-0777",
      "the index is rebuilt on start",
    );
  } finally {
    await reader.close();
    assert.equal((await second.stop()).code, 0);
  }
});

Deno.test("memory encryption: a sensitive value is not on disk in plaintext and needs the key", async () => {
  await using dir = await tempDir();
  const secret = "correct horse battery staple " + crypto.randomUUID();
  const daemon = await spawnServe(dir.path);
  const client = await connect(daemon);
  try {
    await structured(client, "store_memory", {
      namespace: "vault",
      key: "wifi",
      value: secret,
      tags: ["sensitive", "home"],
    });
    await structured(client, "store_memory", {
      namespace: "vault",
      key: "plain",
      value: "not secret at all",
    });
    const back = await structured(client, "retrieve_memory", {
      namespace: "vault",
      key: "wifi",
    });
    assert.equal(back.value, secret);
    assert.equal(back.sensitive, true);
    const found = await structured(client, "search_memory", {
      namespace: "vault",
      query: "horse battery",
    });
    assert.ok(
      !(found.hits as { key: string }[]).some((hit) => hit.key === "wifi"),
      "sensitive values are not searchable by their content",
    );
    const byTag = await structured(client, "search_memory", {
      namespace: "vault",
      query: "wifi home",
    });
    assert.equal(
      (byTag.hits as { key: string }[])[0].key,
      "wifi",
      "but are by key and tags",
    );
  } finally {
    await client.close();
    assert.equal((await daemon.stop()).code, 0);
  }

  // Raw bytes of every file in the data dir (KV file, its WAL, ...): the secret is nowhere.
  let raw = "";
  for await (const file of Deno.readDir(dir.path)) {
    if (!file.isFile) continue;
    raw += new TextDecoder("latin1").decode(
      await Deno.readFile(join(dir.path, file.name)),
    );
  }
  assert.ok(
    !raw.includes("correct horse battery staple"),
    "plaintext of a sensitive value on disk",
  );
  assert.ok(
    raw.includes("not secret at all"),
    "the check above can see plaintext when there is some",
  );
  const keyFile = await Deno.stat(join(dir.path, "secret.key"));
  assert.equal((keyFile.mode ?? 0) & 0o777, 0o600);

  // Another key cannot read it, and says why.
  const otherKey = btoa(
    String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))),
  );
  const wrong = await spawnServe(dir.path, {
    env: { AGENTD_SECRET_KEY: otherKey },
  });
  const stranger = await connect(wrong);
  try {
    const result = await stranger.callTool({
      name: "retrieve_memory",
      arguments: { namespace: "vault", key: "wifi" },
    });
    assert.equal(result.isError, true);
    assert.match(JSON.stringify(result.content), /secret key differs/);
    assert.doesNotMatch(JSON.stringify(result.content), /horse/);
  } finally {
    await stranger.close();
    assert.equal((await wrong.stop()).code, 0);
  }
});
