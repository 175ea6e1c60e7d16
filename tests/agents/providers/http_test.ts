import assert from "node:assert/strict";
import { retryAfter } from "../../../agents/providers/http.ts";
import { startModelServer, TEST_API_KEY } from "../model_server.ts";
import { harness, HELLO, providerError } from "./harness.ts";

function retries(lines: string[]): Record<string, unknown>[] {
  return lines.map((l) => JSON.parse(l)).filter((r) =>
    r.event === "model_retry"
  );
}

for (const provider of ["openai", "anthropic"]) {
  Deno.test(`${provider}: 429 with retry-after is retried, then answered`, async () => {
    await using server = await startModelServer();
    server.script([{ text: "finally" }]);
    server.failNext(429, 2, { headers: { "retry-after": "0" } });
    const { models, lines } = harness(server);
    const answer = await models.resolve(`${provider}/m`).complete(HELLO);
    assert.equal(answer.content, "finally");
    assert.equal(server.requests.length, 3);
    assert.deepEqual(
      retries(lines).map((r) => [r.status, r.attempt, r.delay_ms]),
      [[429, 1, 0], [429, 2, 0]],
    );
  });
}

Deno.test("retry-after seconds are waited for", async () => {
  await using server = await startModelServer();
  server.failNext(429, 1, { headers: { "retry-after": "1" } });
  const { models } = harness(server);
  const started = Date.now();
  await models.resolve("openai/m").complete(HELLO);
  assert.ok(Date.now() - started >= 950, "retried before retry-after");
  assert.equal(server.requests.length, 2);
});

Deno.test("retry-after forms: ms, seconds, HTTP date, capped", () => {
  const now = Date.parse("2024-01-01T00:00:00Z");
  const h = (init: Record<string, string>) => new Headers(init);
  assert.equal(retryAfter(h({ "retry-after-ms": "250" }), now), 250);
  assert.equal(retryAfter(h({ "retry-after": "2" }), now), 2000);
  assert.equal(
    retryAfter(h({ "retry-after": "Mon, 01 Jan 2024 00:00:05 GMT" }), now),
    5000,
  );
  assert.equal(retryAfter(h({ "retry-after": "3600" }), now), 30000);
  assert.equal(retryAfter(h({ "retry-after": "soon" }), now), undefined);
  assert.equal(retryAfter(h({}), now), undefined);
});

Deno.test("a 500 is retried with backoff, then answered (streamed)", async () => {
  await using server = await startModelServer();
  server.script([{ text: "recovered" }]);
  server.failNext(500, 1);
  const { models, lines } = harness(server);
  const deltas: string[] = [];
  const answer = await models.resolve("openai/m").complete(HELLO, {
    onText: (d) => deltas.push(d),
  });
  assert.equal(answer.content, "recovered");
  assert.equal(deltas.join(""), "recovered");
  assert.equal(server.requests.length, 2);
  const [retry] = retries(lines);
  assert.equal(retry.status, 500);
  assert.ok(Number(retry.delay_ms) >= 250, "backoff without delay");
});

Deno.test("5xx after all retries is a 502 with the provider's message", async () => {
  await using server = await startModelServer();
  server.failNext(529, 2, {
    body: {
      type: "error",
      error: { type: "overloaded_error", message: "Overloaded" },
    },
  });
  const { models } = harness(server, {
    config: { anthropic: { api: "anthropic", max_retries: 1 } },
  });
  const error = await providerError(
    models.resolve("anthropic/m").complete(HELLO),
  );
  assert.equal(error.kind, "bad_gateway");
  assert.equal(
    error.message,
    'Provider "anthropic" failed (HTTP 529) after 2 attempts: Overloaded',
  );
  assert.equal(server.requests.length, 2);
});

Deno.test("a 400 is not retried: 502 with the provider's message, truncated", async () => {
  await using server = await startModelServer();
  const long = "Invalid 'messages[0].content': " + "x".repeat(2000);
  server.failNext(400, 1, {
    body: { error: { message: long, type: "invalid_request_error" } },
  });
  const { models } = harness(server);
  const error = await providerError(models.resolve("openai/m").complete(HELLO));
  assert.equal(error.kind, "bad_gateway");
  assert.match(
    error.message,
    /^Provider "openai" rejected the request \(HTTP 400\): Invalid 'messages\[0\]\.content': x+…$/,
  );
  assert.ok(error.message.length < 400);
  assert.equal(server.requests.length, 1);
});

Deno.test("no answer within timeout_ms is a 504, not retried", async () => {
  await using server = await startModelServer();
  server.script([{ text: "too late", delay_ms: 5000 }]);
  const { models } = harness(server, {
    config: { openai: { api: "openai", timeout_ms: 150, max_retries: 0 } },
  });
  const error = await providerError(models.resolve("openai/m").complete(HELLO));
  assert.equal(error.kind, "gateway_timeout");
  assert.equal(
    error.message,
    `Provider "openai" at ${server.openaiBaseUrl} timed out: no answer within 150 ms`,
  );
  assert.equal(server.requests.length, 1);
});

Deno.test("a gap in a stream longer than timeout_ms is a 504; shorter gaps are fine", async () => {
  await using server = await startModelServer();
  server.script([{ text: "one two three", chunk_delay_ms: 100 }]);
  const { models } = harness(server, {
    config: { anthropic: { api: "anthropic", timeout_ms: 500 } },
  });
  const deltas: string[] = [];
  // Each event comes well within the idle timeout, so the whole answer arrives...
  const answer = await models.resolve("anthropic/m").complete(HELLO, {
    onText: (d) => deltas.push(d),
  });
  assert.equal(answer.content, "one two three");

  server.script([{ text: "one two three", chunk_delay_ms: 5000 }]);
  deltas.length = 0;
  const { models: impatient } = harness(server, {
    config: { anthropic: { api: "anthropic", timeout_ms: 300 } },
  });
  // ...but a gap longer than the timeout ends the call.
  const error = await providerError(
    impatient.resolve("anthropic/m").complete(HELLO, {
      onText: (d) => deltas.push(d),
    }),
  );
  assert.equal(error.kind, "gateway_timeout");
  assert.deepEqual(deltas, []);
});

Deno.test("the caller's abort ends the call at once, without retries", async () => {
  await using server = await startModelServer();
  server.script([{ text: "never", delay_ms: 5000 }]);
  const { models } = harness(server);
  const controller = new AbortController();
  const call = models.resolve("openai/m").complete(HELLO, {
    signal: controller.signal,
  });
  setTimeout(() => controller.abort(), 50);
  await assert.rejects(call, (error: unknown) => {
    assert.ok(error instanceof DOMException);
    assert.equal(error.name, "AbortError");
    return true;
  });
  assert.equal(server.requests.length, 1);

  // Aborted before the call: no request at all.
  await assert.rejects(
    models.resolve("openai/m").complete(HELLO, { signal: controller.signal }),
  );
  assert.equal(server.requests.length, 1);
});

Deno.test("an unreachable provider is a 503 naming its URL", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  const base = `http://127.0.0.1:${port}/v1`;
  const { models } = harness(undefined, {
    config: { local: { api: "openai", base_url: base, max_retries: 0 } },
  });
  const error = await providerError(models.resolve("local/m").complete(HELLO));
  assert.equal(error.kind, "unavailable");
  assert.equal(error.provider, "local");
  assert.equal(
    error.message,
    `Provider "local" at ${base} is unreachable: connection refused`,
  );
});

Deno.test("a network error is retried", async () => {
  await using server = await startModelServer();
  let calls = 0;
  const fetchFn: typeof fetch = (input, init) => {
    calls++;
    if (calls === 1) {
      return Promise.reject(
        new TypeError("error sending request: connection reset"),
      );
    }
    return fetch(input, init);
  };
  const { models, lines } = harness(server, { fetchFn });
  const answer = await models.resolve("openai/m").complete(HELLO);
  assert.equal(answer.content.length > 0, true);
  assert.equal(calls, 2);
  assert.match(
    String(retries(lines)[0].error),
    /unreachable: connection reset/,
  );
});

const MISSING_KEYS: [provider: string, variable: string][] = [
  ["anthropic", "ANTHROPIC_API_KEY"],
  ["openai", "OPENAI_API_KEY"],
  ["openrouter", "OPENROUTER_API_KEY"],
  ["custom", "CUSTOM_KEY"],
];
for (const [provider, variable] of MISSING_KEYS) {
  Deno.test(`${provider}: a missing key is a 503 at call time naming ${variable}`, async () => {
    let fetched = false;
    const { models } = harness(undefined, {
      config: {
        custom: {
          api: "anthropic",
          base_url: "http://127.0.0.1:9/",
          api_key_env: "CUSTOM_KEY",
        },
      },
      fetchFn: () => {
        fetched = true;
        return Promise.reject(new Error("no request expected"));
      },
    });
    const model = models.resolve(`${provider}/m`); // creating it is fine
    const error = await providerError(model.complete(HELLO));
    assert.equal(error.kind, "unavailable");
    assert.equal(error.provider, provider);
    assert.match(
      error.message,
      new RegExp(
        `^Provider "${provider}" is not configured: set ${variable} \\(`,
      ),
    );
    assert.equal(fetched, false);
  });
}

Deno.test("keys never appear in errors or logs, even when the server echoes them", async () => {
  await using server = await startModelServer();
  for (const provider of ["openai", "anthropic"]) {
    server.failNext(500, 1, {
      body: { error: { message: `upstream saw key ${TEST_API_KEY}` } },
    });
    server.failNext(401, 1, {
      body: {
        error: { message: `Incorrect API key provided: ${TEST_API_KEY}.` },
      },
    });
    const { models, log, lines } = harness(server);
    const error = await providerError(
      models.resolve(`${provider}/m`).complete(HELLO),
    );
    assert.equal(error.kind, "bad_gateway");
    assert.match(error.message, /Incorrect API key provided: \[redacted\]\./);
    assert.ok(!error.message.includes(TEST_API_KEY));
    // The key was registered as a secret when the model was resolved.
    log.error("model_failed", { error, note: `key ${TEST_API_KEY}` });
    assert.ok(lines.length >= 2);
    for (const line of lines) assert.ok(!line.includes(TEST_API_KEY), line);
  }
  assert.equal(server.requests.length, 4);
});
