// Property-based bad input for every /v1 route (read from the served
// OpenAPI document, so new routes are covered without edits) through
// `app.request()` of the real routes app: hostile bodies, path segments and
// query values (as the operator, as an agent's token, with a wrong token)
// get a 4xx JSON error (never a 5xx, a stack trace or a hang),
// and a rejected request leaves the store as it was.

import assert from "node:assert/strict";
import fc from "fast-check";
import type { JsonValue } from "../../platform/store/mod.ts";
import { ALICE_TOKEN, type Stack, startStack } from "../agents/stack.ts";
import {
  dumpStore,
  nastyObject,
  nastyScalar,
  nastyValue,
  sized,
} from "./bad_values.ts";

interface Operation {
  method: string;
  path: string;
  query: string[];
}

function recordOf(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? Object.fromEntries(Object.entries(value))
    : {};
}

/** Every property name anywhere in the document: the fields bodies are built from. */
function propertyNames(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) {
    for (const item of value) propertyNames(item, into);
  } else if (typeof value === "object" && value !== null) {
    for (const [key, child] of Object.entries(value)) {
      if (key === "properties") {
        for (const name of Object.keys(recordOf(child))) into.add(name);
      }
      propertyNames(child, into);
    }
  }
  return into;
}

function operationsOf(document: unknown): Operation[] {
  const operations: Operation[] = [];
  for (
    const [path, item] of Object.entries(recordOf(recordOf(document).paths))
  ) {
    for (const [method, operation] of Object.entries(recordOf(item))) {
      const parameters = recordOf(operation).parameters;
      const query = (Array.isArray(parameters) ? parameters : [])
        .map(recordOf)
        .filter((parameter) => parameter.in === "query")
        .map((parameter) => String(parameter.name));
      operations.push({ method: method.toUpperCase(), path, query });
    }
  }
  return operations;
}

const segment: fc.Arbitrary<string> = fc.oneof(
  nastyScalar.map((value) =>
    encodeURIComponent(String(value).slice(0, 3000).toWellFormed()) || "%20"
  ),
  fc.constantFrom(
    "resident",
    "agt_00000000000000000000000000",
    "..",
    "%2e%2e",
    "%00",
    "RESIDENT",
    "resident%2F..",
    "run_x",
  ),
);

/** A body as raw text: broken JSON, wrong top-level types, or a hostile object. */
function bodyOf(fields: readonly string[]): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    {
      weight: 6,
      arbitrary: nastyObject(fields).map((body) => JSON.stringify(body)),
    },
    {
      weight: 1,
      arbitrary: nastyValue.map((body: JsonValue) => JSON.stringify(body)),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "",
        "{",
        '{"name":',
        "null",
        "[]",
        '"text"',
        "\u0000",
        '{"name":"a","name":"b"}',
      ),
    },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

async function state(stack: Stack): Promise<string> {
  return JSON.stringify(await dumpStore(stack.store));
}

Deno.test("reliability: hostile requests to every /v1 route get a clear 4xx and store nothing", async () => {
  await using stack = await startStack();
  // One resident agent and team, so routes with a real reference reach their body checks.
  assert.equal(
    (await stack.request("POST", "/v1/agents", { name: "resident" })).status,
    201,
  );
  assert.equal(
    (await stack.request("POST", "/v1/teams", {
      name: "resident",
      agents: ["resident"],
    }))
      .status,
    201,
  );
  const document = (await stack.request("GET", "/v1/openapi.json")).json;
  const operations = operationsOf(document);
  assert.ok(operations.length >= 14, `${operations.length} operations`);
  const fields = [...propertyNames(document)];
  const seen = new Map<string, number>();
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...operations),
      fc.infiniteStream(segment),
      fc.dictionary(
        fc.constantFrom("limit", "cursor", "status", "x"),
        segment,
        { maxKeys: 3 },
      ),
      bodyOf(fields),
      fc.constantFrom<Record<string, string>>(
        {},
        { authorization: `Bearer ${ALICE_TOKEN}` },
        { authorization: "Bearer not-a-token-0123456789" },
        { authorization: "Basic YTpi" },
      ),
      async (operation, segments, query, generated, auth) => {
        const path = operation.path.replace(
          /\{[^}]+\}/g,
          () => segments.next().value,
        );
        const search = new URLSearchParams(query).toString();
        const url = search ? `${path}?${search}` : path;
        const body = operation.method === "GET" || operation.method === "DELETE"
          ? undefined
          : generated;
        const before = await state(stack);
        const reply = await stack.request(operation.method, url, body, auth);
        const key = `${operation.method} ${operation.path} ${reply.status}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
        assert.ok(
          reply.status < 500,
          `${operation.method} ${url.slice(0, 200)} ${
            String(body).slice(0, 200)
          } → ${reply.status} ${reply.text.slice(0, 300)}`,
        );
        assert.doesNotMatch(reply.text, /\bat .*\.ts:\d+/, "no stack trace");
        if (reply.status >= 400) {
          const error = recordOf(recordOf(reply.json).error);
          assert.equal(typeof error.code, "string", reply.text.slice(0, 200));
          assert.equal(
            typeof error.message,
            "string",
            reply.text.slice(0, 200),
          );
          assert.equal(await state(stack), before, `${key} changed the store`);
        }
      },
    ),
    { numRuns: sized(2_500, 25_000) },
  );
  // Every operation was reached.
  for (const operation of operations) {
    assert.ok(
      [...seen.keys()].some((key) =>
        key.startsWith(`${operation.method} ${operation.path} `)
      ),
      `${operation.method} ${operation.path} never tried`,
    );
  }
});
