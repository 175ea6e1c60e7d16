import assert from "node:assert/strict";
import {
  createEmbedder,
  EmbedderConfig,
} from "../../../tools/memory/embedder.ts";
import { BuiltinEmbedder } from "../../../tools/memory/embedder_builtin.ts";
import { tokenize } from "../../../tools/memory/search_tokens.ts";
import { EmbedderError } from "../../../tools/memory/embedder_http.ts";
import {
  ollamaBaseUrl,
  OllamaEmbedder,
  OpenAiEmbedder,
} from "../../../tools/memory/embedder_remote.ts";

const KEY = "sk-test-0123456789abcdef";

interface Recorded {
  path: string;
  authorization: string | null;
  body: unknown;
}

type Reply = (body: { model: string; input: string[] }, request: Request) =>
  | Response
  | Promise<Response>;

/** A local HTTP server answering each POST with the next reply (the last one repeats). */
async function withServer(
  replies: Reply[],
  run: (url: string, requests: Recorded[]) => Promise<void>,
): Promise<void> {
  const requests: Recorded[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      const body = await request.json();
      requests.push({
        path: new URL(request.url).pathname,
        authorization: request.headers.get("authorization"),
        body,
      });
      const reply = replies[Math.min(requests.length, replies.length) - 1];
      return await reply(body, request);
    },
  );
  try {
    await run(`http://127.0.0.1:${server.addr.port}`, requests);
  } finally {
    await server.shutdown();
  }
}

/** A recognisable vector per text: [length, 1, 0]. */
function fakeVector(text: string): number[] {
  return [text.length, 1, 0];
}

/** The OpenAI wire format, with `data` deliberately out of order. */
const openAiOk: Reply = (body) =>
  Response.json({
    object: "list",
    data: body.input.map((text, index) => ({
      object: "embedding",
      index,
      embedding: fakeVector(text),
    })).reverse(),
    model: body.model,
    usage: { prompt_tokens: 3, total_tokens: 3 },
  });

const ollamaOk: Reply = (body) =>
  Response.json({
    model: body.model,
    embeddings: body.input.map(fakeVector),
    total_duration: 1000,
    prompt_eval_count: 3,
  });

function unit(v: number[]): number[] {
  const norm = Math.hypot(...v);
  return v.map((x) => Math.fround(x / norm));
}

async function rejection(promise: Promise<unknown>): Promise<EmbedderError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof EmbedderError, String(error));
    assert.ok(!error.message.includes(KEY), error.message);
    return error;
  }
  assert.fail("expected a rejection");
}

function openAi(url: string, extra: Record<string, unknown> = {}) {
  return new OpenAiEmbedder({
    baseUrl: `${url}/v1`,
    apiKey: KEY,
    model: "text-embedding-3-small",
    retryBaseMs: 1,
    ...extra,
  });
}

Deno.test("builtin embedder: deterministic unit vectors of 256 dims", async () => {
  const embedder = new BuiltinEmbedder();
  assert.equal(embedder.id, "builtin:hash-v3:256");
  const [a, b, empty] = await embedder.embed([
    "Deno KV stores memories",
    "Deno KV stores memories",
    "",
  ]);
  assert.equal(a.length, 256);
  assert.deepEqual(a, b);
  assert.ok(Math.abs(a.reduce((s, x) => s + x * x, 0) - 1) < 1e-5);
  assert.ok(empty.every((x) => x === 0));
});

/** The builtin embedder as defined: hashing of the feature strings themselves. */
function referenceEmbed(text: string): Float32Array {
  const fnv = (t: string) => {
    let h = 0x811c9dc5;
    for (let i = 0; i < t.length; i++) {
      h = Math.imul(h ^ t.charCodeAt(i), 0x01000193);
    }
    return h >>> 0;
  };
  const mix = (h: number) => {
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    return (h ^ (h >>> 16)) >>> 0;
  };
  const words = tokenize(text, false);
  const counts = new Map<string, { weight: number; tf: number }>();
  const add = (feature: string, weight: number) => {
    const seen = counts.get(feature);
    if (seen) seen.tf++;
    else counts.set(feature, { weight, tf: 1 });
  };
  words.forEach((word, i) => {
    add(`w:${word}`, 1);
    if (i > 0) add(`b:${words[i - 1]} ${word}`, 0.7);
    const padded = `<${word}>`;
    const gramWeight = 0.5 / Math.sqrt(Math.max(1, padded.length - 2));
    for (let j = 0; j + 3 <= padded.length; j++) {
      add(`c:${padded.slice(j, j + 3)}`, gramWeight);
    }
  });
  const vector = new Float32Array(256);
  for (const [feature, { weight, tf }] of counts) {
    const h = mix(fnv(feature));
    vector[h % 256] += ((h >>> 31) === 0 ? 1 : -1) * weight *
      (1 + Math.log(tf));
  }
  let norm = 0;
  for (const x of vector) norm += x * x;
  if (norm > 0) {
    const scale = 1 / Math.sqrt(norm);
    for (let i = 0; i < vector.length; i++) vector[i] *= scale;
  }
  return vector;
}

Deno.test("builtin embedder: bit for bit the vectors of hashing the feature strings", async () => {
  // Repeated words, pairs and 3-grams, CJK, accents, surrogate pairs and long runs.
  const texts = [
    "note-1\nThe quick brown fox jumps over the lazy dog; the dog sleeps.\nclient-acme",
    "stores stored storing store STORES 2026-11-26 09:05 v2.9.6",
    "東京の天気は晴れ 東京 서울 ひらがな",
    "naïve café résumé ÉCOLE ﬁne",
    "aaa aaa aaa aaaa ab ab ba ba " + "x".repeat(300),
    "😀 emoji 😀😀 ok",
    "",
  ];
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < 300; i++) {
    const words = Array.from(
      { length: Math.floor(next() * 40) },
      () => "abcd"[Math.floor(next() * 4)].repeat(1 + Math.floor(next() * 4)),
    );
    texts.push(words.join(" "));
  }
  const vectors = await new BuiltinEmbedder().embed(texts);
  texts.forEach((text, i) => {
    const expected = referenceEmbed(text);
    assert.ok(
      expected.every((x, d) => Object.is(x, vectors[i][d])),
      `vector of ${JSON.stringify(text.slice(0, 60))}`,
    );
  });
});

Deno.test("builtin embedder: shared words and word forms score higher", async () => {
  const embedder = new BuiltinEmbedder();
  const [query, close, morph, far] = await embedder.embed([
    "favourite programming language",
    "my favourite language for programming is Rust",
    "programmers love languages",
    "the weather in Lisbon is sunny",
  ]);
  const cos = (x: Float32Array, y: Float32Array) =>
    x.reduce((s, v, i) => s + v * y[i], 0);
  assert.ok(cos(query, close) > 0.5, `${cos(query, close)}`);
  assert.ok(cos(query, morph) > cos(query, far));
  assert.ok(Math.abs(cos(query, far)) < 0.3, `${cos(query, far)}`);
});

Deno.test("openai: posts the wire format and orders vectors by index", async () => {
  await withServer([openAiOk], async (url, requests) => {
    const embedder = openAi(url);
    assert.equal(embedder.id, "openai:text-embedding-3-small");
    const vectors = await embedder.embed(["a", "bbb"]);
    assert.deepEqual(vectors.map((v) => [...v]), [
      unit([1, 1, 0]),
      unit([3, 1, 0]),
    ]);
    assert.deepEqual(requests, [{
      path: "/v1/embeddings",
      authorization: `Bearer ${KEY}`,
      body: { model: "text-embedding-3-small", input: ["a", "bbb"] },
    }]);
    assert.deepEqual(await embedder.embed([]), []);
    assert.equal(requests.length, 1);
  });
});

Deno.test("openai: batches inputs", async () => {
  await withServer([openAiOk], async (url, requests) => {
    const texts = ["a", "bb", "ccc", "dddd", "eeeee"];
    const vectors = await openAi(url, { batchSize: 2 }).embed(texts);
    assert.deepEqual(requests.map((r) => r.body), [
      { model: "text-embedding-3-small", input: ["a", "bb"] },
      { model: "text-embedding-3-small", input: ["ccc", "dddd"] },
      { model: "text-embedding-3-small", input: ["eeeee"] },
    ]);
    assert.deepEqual(
      vectors.map((v) => [...v]),
      texts.map((t) => unit(fakeVector(t))),
    );
  });
});

Deno.test("openai: a 401 names provider, URL and reason, without the key", async () => {
  const reply: Reply = () =>
    Response.json({
      error: {
        message: `Incorrect API key provided: ${KEY}. invalid api key`,
        type: "invalid_request_error",
        code: "invalid_api_key",
      },
    }, { status: 401 });
  await withServer([reply], async (url, requests) => {
    const error = await rejection(openAi(url).embed(["x"]));
    assert.equal(
      error.message,
      `Embedding provider openai at ${url}/v1 answered 401: ` +
        "Incorrect API key provided: [redacted]. invalid api key",
    );
    assert.equal(error.status, 401);
    assert.equal(requests.length, 1, "4xx other than 429 is not retried");
  });
});

Deno.test("openai: 429 then 200 succeeds, honouring Retry-After", async () => {
  const limited: Reply = () =>
    Response.json({ error: { message: "Rate limit reached" } }, {
      status: 429,
      headers: { "retry-after": "1" },
    });
  await withServer([limited, openAiOk], async (url, requests) => {
    const started = performance.now();
    const [vector] = await openAi(url).embed(["hello"]);
    assert.ok(performance.now() - started >= 900, "waited for Retry-After");
    assert.deepEqual([...vector], unit(fakeVector("hello")));
    assert.equal(requests.length, 2);
  });
});

Deno.test("openai: 500 three times gives up with the last error", async () => {
  const broken: Reply = () =>
    new Response("upstream exploded", { status: 500 });
  await withServer([broken], async (url, requests) => {
    const error = await rejection(openAi(url).embed(["x"]));
    assert.equal(
      error.message,
      `Embedding provider openai at ${url}/v1 answered 500: upstream exploded ` +
        "(gave up after 3 attempts)",
    );
    assert.equal(requests.length, 3);
  });
});

Deno.test("openai: malformed bodies are clear errors", async () => {
  const cases: [Reply, RegExp][] = [
    [() => new Response("<html>oops</html>"), /sent a body that is not JSON/],
    [
      () => Response.json({ data: [{ index: 0, embedding: "AAAA" }] }),
      /sent an unexpected response: data\.0\.embedding: /,
    ],
    [
      () => Response.json({ data: [] }),
      /sent an unexpected response: embedding 0 is missing/,
    ],
    [
      () =>
        Response.json({
          data: [{ index: 0, embedding: [1, 2] }, {
            index: 1,
            embedding: [1],
          }],
        }),
      /embedding 1 has 1 dimensions, expected 2/,
    ],
    [
      () => Response.json({ data: [{ index: 5, embedding: [1] }] }),
      /index 5 is out of range or repeated/,
    ],
  ];
  for (const [reply, pattern] of cases) {
    await withServer([reply], async (url, requests) => {
      const error = await rejection(openAi(url).embed(["a", "b"].slice(0, 2)));
      assert.match(error.message, pattern);
      assert.match(error.message, /^Embedding provider openai at http:/);
      assert.equal(requests.length, 1, "a malformed body is not retried");
    });
  }
});

Deno.test("openai: a slow server times out", async () => {
  const slow: Reply = (_body, request) =>
    new Promise((resolve) =>
      request.signal.addEventListener(
        "abort",
        () => resolve(new Response("late")),
      )
    );
  await withServer([slow], async (url, requests) => {
    const error = await rejection(
      openAi(url, { timeoutMs: 100 }).embed(["x"]),
    );
    assert.equal(
      error.message,
      `Embedding provider openai at ${url}/v1 did not answer within 100 ms (embedder_timeout_ms)`,
    );
    assert.equal(requests.length, 1);
  });
});

Deno.test("openai: an unreachable server is retried, then reported", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  const error = await rejection(
    openAi(`http://user:hunter2pass@127.0.0.1:${port}`).embed(["x"]),
  );
  assert.ok(!error.message.includes("hunter2pass"), "no URL credentials");
  assert.match(
    error.message,
    new RegExp(
      `^Embedding provider openai at http://127\\.0\\.0\\.1:${port}/v1 is unreachable: .*\\(gave up after 3 attempts\\)$`,
    ),
  );
});

Deno.test("openai: the caller's abort signal stops at once", async () => {
  const limited: Reply = () => new Response("busy", { status: 503 });
  await withServer([limited], async (url) => {
    const controller = new AbortController();
    const embedding = openAi(url, { retryBaseMs: 60_000 }).embed(
      ["x"],
      controller.signal,
    );
    setTimeout(() => controller.abort(new Error("caller gave up")), 50);
    await assert.rejects(embedding, /caller gave up/);
  });
});

Deno.test("ollama: posts /api/embed and reads embeddings", async () => {
  await withServer([ollamaOk], async (url, requests) => {
    const embedder = new OllamaEmbedder({
      host: url.replace("http://", ""),
      model: "nomic-embed-text",
      batchSize: 2,
    });
    assert.equal(embedder.id, "ollama:nomic-embed-text");
    const vectors = await embedder.embed(["a", "bb", "ccc"]);
    assert.deepEqual(vectors.map((v) => [...v]), [
      unit([1, 1, 0]),
      unit([2, 1, 0]),
      unit([3, 1, 0]),
    ]);
    assert.deepEqual(requests, [
      {
        path: "/api/embed",
        authorization: null,
        body: { model: "nomic-embed-text", input: ["a", "bb"] },
      },
      {
        path: "/api/embed",
        authorization: null,
        body: { model: "nomic-embed-text", input: ["ccc"] },
      },
    ]);
  });
});

Deno.test("ollama: errors carry Ollama's message; 5xx is retried", async () => {
  const missing: Reply = () =>
    Response.json({
      error: 'model "nope" not found, try pulling it first',
    }, { status: 404 });
  await withServer([missing], async (url) => {
    const error = await rejection(
      new OllamaEmbedder({ host: url, model: "nope" }).embed(["x"]),
    );
    assert.equal(
      error.message,
      `Embedding provider ollama at ${url} answered 404: model "nope" not found, try pulling it first`,
    );
  });
  const flaky: Reply = () => new Response("", { status: 502 });
  await withServer([flaky, ollamaOk], async (url, requests) => {
    const embedder = new OllamaEmbedder({
      host: url,
      model: "m",
      retryBaseMs: 1,
    });
    assert.equal((await embedder.embed(["x"])).length, 1);
    assert.equal(requests.length, 2);
  });
  await withServer([() => Response.json({ embedding: [1] })], async (url) => {
    const error = await rejection(
      new OllamaEmbedder({ host: url, model: "m" }).embed(["x"]),
    );
    assert.match(error.message, /unexpected response: embeddings: /);
  });
});

Deno.test("ollamaBaseUrl accepts OLLAMA_HOST forms", () => {
  assert.equal(ollamaBaseUrl(""), "http://127.0.0.1:11434");
  assert.equal(ollamaBaseUrl("127.0.0.1:11434"), "http://127.0.0.1:11434");
  assert.equal(ollamaBaseUrl("gpu-box"), "http://gpu-box:11434");
  assert.equal(ollamaBaseUrl("0.0.0.0:9999"), "http://0.0.0.0:9999");
  assert.equal(
    ollamaBaseUrl("https://ollama.example"),
    "https://ollama.example",
  );
  assert.equal(ollamaBaseUrl("http://[::1]:11434/"), "http://[::1]:11434");
  assert.throws(() => ollamaBaseUrl("http://"), /not a host, host:port or URL/);
});

Deno.test("EmbedderConfig defaults and createEmbedder", () => {
  const defaults = EmbedderConfig.parse({});
  assert.deepEqual(defaults, {
    embedder: "builtin",
    embedder_key_env: "OPENAI_API_KEY",
    embedder_timeout_ms: 30000,
    embedder_batch_size: 64,
  });
  assert.equal(createEmbedder(defaults, {}).id, "builtin:hash-v3:256");

  const openai = EmbedderConfig.parse({ embedder: "openai" });
  assert.throws(
    () => createEmbedder(openai, {}),
    /needs an API key: set OPENAI_API_KEY/,
  );
  assert.equal(
    createEmbedder(openai, { OPENAI_API_KEY: KEY }).id,
    "openai:text-embedding-3-small",
  );
  // A local OpenAI-compatible server needs no key.
  const local = EmbedderConfig.parse({
    embedder: "openai",
    embedder_url: "http://127.0.0.1:8000/v1",
    embedder_model: "bge-m3",
  });
  assert.equal(createEmbedder(local, {}).id, "openai:bge-m3");
  assert.throws(
    () =>
      createEmbedder(
        EmbedderConfig.parse({ embedder: "openai", embedder_url: "nope" }),
        {},
      ),
    /embedder_url "nope" is not a URL/,
  );
  assert.equal(
    createEmbedder(EmbedderConfig.parse({ embedder: "ollama" }), {
      OLLAMA_HOST: "box:1234",
    }).id,
    "ollama:nomic-embed-text",
  );
  assert.equal(
    EmbedderConfig.safeParse({ embedder_key_env: "not a name" }).success,
    false,
  );
  assert.equal(EmbedderConfig.safeParse({ embedder: "cohere" }).success, false);
});
