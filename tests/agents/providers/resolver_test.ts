import assert from "node:assert/strict";
import { ModelNameError } from "../../../agents/model.ts";
import {
  createModelResolver,
  ProvidersConfig,
} from "../../../agents/providers/mod.ts";
import { ollamaOrigin } from "../../../agents/providers/config.ts";
import { createLogger } from "../../../platform/log.ts";
import { startModelServer, TEST_API_KEY } from "../model_server.ts";
import { harness, HELLO, providerError } from "./harness.ts";

const BUILT_IN = ["anthropic", "ollama", "openai", "openrouter"];

Deno.test("resolver: built-in and configured providers are listed, sorted", () => {
  const { models } = harness(undefined, {
    config: { vllm: { api: "openai", base_url: "http://gpu:8000/v1" } },
  });
  assert.deepEqual(models.providers(), [...BUILT_IN, "vllm"].sort());
  assert.deepEqual(harness(undefined).models.providers(), BUILT_IN);
});

Deno.test("resolver: a bad model string is a ModelNameError listing providers", () => {
  const { models } = harness(undefined);
  for (const bad of ["openai/", "/gpt-4o", "", "openai/  "]) {
    assert.throws(() => models.resolve(bad), (error: unknown) => {
      assert.ok(error instanceof ModelNameError, String(error));
      assert.equal(
        error.message,
        `Invalid model "${bad}": expected "<model>" or "<provider>/<model>", e.g. "gpt-4o-mini" or "openai/gpt-4o-mini"; providers: anthropic, ollama, openai, openrouter`,
      );
      return true;
    });
  }
});

Deno.test("resolver: an unknown provider is a ModelNameError", () => {
  const { models } = harness(undefined);
  assert.throws(() => models.resolve("mistral/large"), (error: unknown) => {
    assert.ok(error instanceof ModelNameError);
    assert.match(
      error.message,
      /^Unknown provider "mistral" in model "mistral\/large"; providers: anthropic, ollama, openai, openrouter/,
    );
    return true;
  });
  // Not an inherited property either.
  assert.throws(() => models.resolve("constructor/x"), ModelNameError);
});

Deno.test("resolver: a bare model name goes to its well-known provider", async () => {
  await using server = await startModelServer();
  const { models } = harness(server);
  for (
    const [bare, provider] of [
      ["gpt-4o", "openai"],
      ["o3-mini", "openai"],
      ["chatgpt-4o-latest", "openai"],
      ["claude-sonnet-4-5", "anthropic"],
      ["llama3.2:3b", "ollama"],
    ]
  ) {
    assert.equal(models.resolve(bare).id, `${provider}/${bare}`);
  }
  await models.resolve("gpt-4o").complete(HELLO);
  await models.resolve("claude-sonnet-4-5").complete(HELLO);
  assert.deepEqual(
    server.requests.map((r) => [r.api, r.body.model]),
    [["openai", "gpt-4o"], ["anthropic", "claude-sonnet-4-5"]],
  );
});

Deno.test("resolver: the default provider places every bare name first; <provider>/<model> stays explicit", async () => {
  await using server = await startModelServer();
  const { models } = harness(server, {
    defaultProvider: "local",
    config: { local: { api: "openai", base_url: server.openaiBaseUrl } },
  });
  assert.equal(models.resolve("gpt-4o").id, "local/gpt-4o");
  assert.equal(models.resolve("mistral-large").id, "local/mistral-large");
  // A slash that names no provider belongs to the model's name.
  assert.equal(
    models.resolve("meta-llama/llama-3.1-8b").id,
    "local/meta-llama/llama-3.1-8b",
  );
  assert.equal(models.resolve("anthropic/claude-x").id, "anthropic/claude-x");
  await models.resolve("meta-llama/llama-3.1-8b").complete(HELLO);
  assert.equal(server.requests[0].body.model, "meta-llama/llama-3.1-8b");
});

Deno.test("resolver: a bare name nothing fits says which providers were tried", () => {
  const { models } = harness(undefined);
  assert.throws(() => models.resolve("mistral-large"), (error: unknown) => {
    assert.ok(error instanceof ModelNameError);
    assert.match(
      error.message,
      /^No provider for model "mistral-large": tried agents.default_provider \(not set\); prefix gpt-, chatgpt-, o1, o3, o4 → openai; prefix claude- → anthropic; prefix <name>:<tag> → ollama\. Give "<provider>\/mistral-large" with one of: anthropic, ollama, openai, openrouter/,
    );
    assert.equal(error.tried.length, 4);
    return true;
  });
  // An unknown default provider is named as such.
  assert.throws(
    () => harness(undefined, { defaultProvider: "nosuch" }).models.resolve("x"),
    /^ModelNameError: agents.default_provider "nosuch" names no provider, so "x" has none; providers: anthropic, ollama, openai, openrouter/,
  );
});

Deno.test("resolver: OLLAMA_HOST forms", () => {
  assert.equal(ollamaOrigin(undefined), "http://127.0.0.1:11434");
  assert.equal(ollamaOrigin(""), "http://127.0.0.1:11434");
  assert.equal(ollamaOrigin("gpu-box"), "http://gpu-box:11434");
  assert.equal(ollamaOrigin("0.0.0.0:9999"), "http://0.0.0.0:9999");
  assert.equal(ollamaOrigin(":9999"), "http://127.0.0.1:9999");
  assert.equal(ollamaOrigin("[::1]:9999"), "http://[::1]:9999");
  assert.equal(ollamaOrigin("http://gpu-box"), "http://gpu-box:80");
  assert.equal(
    ollamaOrigin("https://ollama.example.com"),
    "https://ollama.example.com:443",
  );
  assert.equal(
    ollamaOrigin("http://10.0.0.2:8080/ollama/"),
    "http://10.0.0.2:8080/ollama",
  );
});

Deno.test("resolver: ollama talks OpenAI-compatible chat at OLLAMA_HOST, without a key", async () => {
  await using server = await startModelServer();
  const host = new URL(server.url).host; // 127.0.0.1:<port>
  for (const OLLAMA_HOST of [host, `http://${host}`]) {
    server.script([{ text: "llama says hi" }]);
    const { models } = harness(undefined, { env: { OLLAMA_HOST } });
    const answer = await models.resolve("ollama/llama3.2:3b").complete(HELLO);
    assert.equal(answer.content, "llama says hi");
    const request = server.requests.at(-1);
    assert.equal(request?.path, "/v1/chat/completions");
    assert.equal(request?.body.model, "llama3.2:3b");
    assert.equal(request?.headers.authorization, undefined);
  }
});

Deno.test("resolver: a configured entry overrides the default of the same name field by field", async () => {
  await using server = await startModelServer();
  const { models } = harness(undefined, {
    env: { OPENAI_API_KEY: TEST_API_KEY },
    config: { openai: { api: "openai", base_url: server.openaiBaseUrl } },
  });
  await models.resolve("openai/gpt-test").complete(HELLO);
  // The base URL is the configured one; the key still comes from OPENAI_API_KEY.
  assert.equal(
    server.requests[0].headers.authorization,
    `Bearer ${TEST_API_KEY}`,
  );
});

Deno.test("resolver: a self-hosted base URL needs no key; a named key variable does", async () => {
  await using server = await startModelServer();
  const { models } = harness(undefined, {
    env: { OPENAI_BASE_URL: server.openaiBaseUrl },
    config: {
      vllm: { api: "openai", base_url: server.openaiBaseUrl },
      gated: {
        api: "openai",
        base_url: server.openaiBaseUrl,
        api_key_env: "GATED_KEY",
      },
    },
  });
  await models.resolve("openai/local").complete(HELLO);
  await models.resolve("vllm/qwen").complete(HELLO);
  assert.equal(server.requests.length, 2);
  for (const r of server.requests) {
    assert.equal(r.headers.authorization, undefined);
  }
  const error = await providerError(
    models.resolve("gated/qwen").complete(HELLO),
  );
  assert.equal(error.kind, "unavailable");
  assert.match(error.message, /set GATED_KEY/);
});

Deno.test("resolver: the model name keeps its slashes (openrouter)", async () => {
  await using server = await startModelServer();
  const { models } = harness(undefined, {
    env: { OPENROUTER_API_KEY: TEST_API_KEY },
    config: { openrouter: { api: "openai", base_url: server.openaiBaseUrl } },
  });
  const model = models.resolve("openrouter/anthropic/claude-3.5-sonnet");
  assert.equal(model.id, "openrouter/anthropic/claude-3.5-sonnet");
  await model.complete(HELLO);
  assert.equal(server.requests[0].body.model, "anthropic/claude-3.5-sonnet");
  assert.equal(
    server.requests[0].headers.authorization,
    `Bearer ${TEST_API_KEY}`,
  );
});

Deno.test("resolver: a bad base URL from the environment is a 503 naming the variable", async () => {
  const { models } = harness(undefined, {
    env: { OPENAI_BASE_URL: "localhost:8000/v1" },
  });
  const error = await providerError(models.resolve("openai/m").complete(HELLO));
  assert.equal(error.kind, "unavailable");
  assert.equal(
    error.message,
    'Provider "openai" is not configured: OPENAI_BASE_URL is not an http(s) URL',
  );
});

Deno.test("config: defaults, strict objects, validated fields", () => {
  assert.deepEqual(ProvidersConfig.parse({ lm: { api: "openai" } }), {
    lm: { api: "openai", timeout_ms: 60000, max_retries: 3 },
  });
  const bad = [
    { lm: { api: "gemini" } },
    { lm: { api: "openai", base_url: "not a url" } },
    { lm: { api: "openai", base_url: "ftp://host/v1" } },
    { lm: { api: "openai", api_key: "sk-inline" } }, // keys live in env, never in config
    { lm: { api: "openai", api_key_env: "NOT-A-VAR" } },
    { lm: { api: "openai", timeout_ms: 0 } },
    { "a/b": { api: "openai" } },
  ];
  for (const value of bad) {
    assert.equal(
      ProvidersConfig.safeParse(value).success,
      false,
      JSON.stringify(value),
    );
  }
});

Deno.test("resolver: a key is registered as a log secret when a model is resolved", () => {
  const lines: string[] = [];
  const log = createLogger({ sink: (l) => lines.push(l) });
  const models = createModelResolver({
    config: {},
    env: { ANTHROPIC_API_KEY: TEST_API_KEY },
    log,
  });
  log.info("before", { note: TEST_API_KEY });
  models.resolve("anthropic/claude-test");
  log.info("after", { note: TEST_API_KEY });
  assert.ok(lines[0].includes(TEST_API_KEY));
  assert.ok(!lines[1].includes(TEST_API_KEY));
});
