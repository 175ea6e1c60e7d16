// Changing the embedder re-embeds what is stored; a dead embedder degrades
// search to lexical instead of failing. The OpenAI-compatible embeddings
// server here is local and speaks the real /v1/embeddings wire format.

import assert from "node:assert/strict";
import type { Client } from "../../../platform/mcp_sdk.ts";
import { type Daemon, spawnServe, tempDir, waitFor } from "../../helpers.ts";
import { call, connectMemory, memoryHealth } from "./scenario.ts";

async function connect(daemon: Daemon): Promise<Client> {
  return (await connectMemory(daemon)).client;
}

async function details(daemon: Daemon): Promise<Record<string, unknown>> {
  return (await memoryHealth(daemon)).memory;
}

/** Bag-of-words into 16 dimensions: enough to make similar texts similar. */
function fakeEmbedding(text: string): number[] {
  const vector = new Array(16).fill(0);
  for (const word of text.toLowerCase().match(/\p{L}+/gu) ?? []) {
    let hash = 0;
    for (const char of word) {
      hash = (hash * 31 + (char.codePointAt(0) ?? 0)) >>> 0;
    }
    vector[hash % 16] += 1;
  }
  return vector;
}

function startEmbeddingsServer(key: string) {
  const seen: string[][] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      if (
        new URL(request.url).pathname !== "/v1/embeddings" ||
        request.method !== "POST"
      ) {
        return new Response("not found", { status: 404 });
      }
      if (request.headers.get("authorization") !== `Bearer ${key}`) {
        return Response.json({
          error: { message: "Incorrect API key provided" },
        }, { status: 401 });
      }
      const body = await request.json();
      const inputs: string[] = Array.isArray(body.input)
        ? body.input
        : [body.input];
      seen.push(inputs);
      return Response.json({
        object: "list",
        model: body.model,
        data: inputs.map((input, index) => ({
          object: "embedding",
          index,
          embedding: fakeEmbedding(input),
        })),
        usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
      });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/v1`,
    seen,
    close: () => server.shutdown(),
  };
}

Deno.test("memory embedder change: stored entries are re-embedded; a dead embedder falls back to lexical", async () => {
  await using dir = await tempDir();
  const first = await spawnServe(dir.path);
  const writer = await connect(first);
  await call(writer, "store_memory", {
    namespace: "n",
    key: "cat",
    value: "the cat sleeps on the warm sofa",
  });
  await call(writer, "store_memory", {
    namespace: "n",
    key: "car",
    value: "the car needs new tyres",
  });
  await call(writer, "store_memory", {
    namespace: "n",
    key: "pin",
    value: "0000",
    tags: ["sensitive"],
  });
  await writer.close();
  assert.equal((await first.stop()).code, 0);

  const key = "sk-test-" + crypto.randomUUID();
  const embeddings = startEmbeddingsServer(key);
  const second = await spawnServe(dir.path, {
    env: {
      AGENTD_MEMORY__EMBEDDER: "openai",
      AGENTD_MEMORY__EMBEDDER_URL: embeddings.url,
      AGENTD_MEMORY__EMBEDDER_MODEL: "fake-embed",
      OPENAI_API_KEY: key,
    },
  });
  const reader = await connect(second);
  try {
    const reindexed = await waitFor(
      () => details(second),
      (d) => d.reindexed === 2,
      20_000,
    );
    assert.equal(reindexed.embedder, "openai:fake-embed");
    const texts = embeddings.seen.flat();
    assert.ok(texts.some((text) => text.includes("warm sofa")));
    assert.ok(
      !texts.some((text) => text.includes("0000")),
      "sensitive values are never sent to an embedder",
    );

    const hybrid = await call(reader, "search_memory", {
      namespace: "n",
      query: "sofa cat",
    });
    assert.equal(hybrid.mode, "hybrid");
    const top = (hybrid.hits as { key: string; matched: string[] }[])[0];
    assert.equal(top.key, "cat");
    assert.deepEqual(top.matched, ["lexical", "vector"]);

    await embeddings.close();
    const lexical = await call(reader, "search_memory", {
      namespace: "n",
      query: "tyres for the car",
    });
    assert.equal(lexical.mode, "lexical");
    assert.match(String(lexical.note), /Vector search unavailable/);
    assert.equal((lexical.hits as { key: string }[])[0].key, "car");
    assert.ok(
      !JSON.stringify(second.logs).includes(key),
      "the API key is never logged",
    );
  } finally {
    await reader.close();
    await embeddings.close().catch(() => {});
    assert.equal((await second.stop()).code, 0);
  }
});
