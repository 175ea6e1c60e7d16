// GET /v1/openapi.json documents every /v1 route the app serves, from the
// same zod schemas; GET /docs renders it as one page that needs no network.

import assert from "node:assert/strict";
import { AgentCreate } from "../../agents/schemas.ts";
import { startStack } from "../agents/stack.ts";

/** `/v1/agents/:ref/send` and `/v1/agents/{agent_id}/send` → `/v1/agents/{}/send` */
const shape = (path: string) =>
  path.replace(/:[^/]+|\{[^}]+\}/g, "{}").replace(/\/$/, "");

function refsIn(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((item) => refsIn(item, out));
  else if (typeof node === "object" && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string") out.push(value);
      else refsIn(value, out);
    }
  }
  return out;
}

Deno.test("openapi: every route of the app is documented, with resolvable schemas from the zod definitions", async () => {
  await using stack = await startStack();
  const reply = await stack.request("GET", "/v1/openapi.json");
  assert.equal(reply.status, 200);
  const doc = Object(reply.json);
  assert.equal(doc.openapi, "3.1.0");
  const documented = new Set<string>();
  for (const [path, methods] of Object.entries(Object(doc.paths))) {
    for (const method of Object.keys(Object(methods))) {
      documented.add(`${method.toUpperCase()} ${shape(path)}`);
    }
  }
  const served = stack.app.routes
    .filter((route) => ["GET", "POST", "DELETE"].includes(route.method))
    .filter((route) => /^\/(v1|\.well-known)\//.test(route.path))
    .filter((route) => route.path !== "/v1/openapi.json")
    .map((route) => `${route.method} ${shape(route.path)}`);
  assert.ok(served.length >= 12, served.join("\n"));
  for (const route of served) {
    assert.ok(documented.has(route), `${route} is not in the OpenAPI document`);
  }
  for (
    const seed of [
      "POST /v1/agents",
      "GET /v1/agents",
      "GET /v1/agents/{}",
      "POST /v1/agents/{}/send",
      "DELETE /v1/agents/{}",
      "POST /v1/teams",
      "GET /v1/teams",
      "POST /v1/teams/{}/execute",
      "GET /v1/a2a/{}/card",
      "POST /v1/a2a/message",
    ]
  ) assert.ok(documented.has(seed), `seed endpoint ${seed}`);

  const schemas = Object(doc.components.schemas);
  for (const ref of refsIn(doc)) {
    const name = ref.replace("#/components/schemas/", "");
    assert.ok(name in schemas, `dangling ${ref}`);
  }
  // The request schema is the route's own: required fields, bounds, strictness.
  const create = Object(
    doc.paths["/v1/agents"].post.requestBody.content["application/json"].schema,
  );
  const body = create.$ref ? schemas[create.$ref.split("/").at(-1)] : create;
  assert.deepEqual(body.required, ["name"]);
  assert.equal(body.additionalProperties, false);
  assert.deepEqual(
    [body.properties.temperature.minimum, body.properties.temperature.maximum],
    [0, 2],
  );
  assert.equal(
    body.properties.max_tokens.default,
    AgentCreate.shape.max_tokens.parse(undefined),
  );
  const send = doc.paths["/v1/agents/{agent_id}/send"].post;
  assert.ok("text/event-stream" in send.responses["200"].content);
  assert.ok(
    ["400", "404", "413", "502", "503"].every((s) => s in send.responses),
  );
  const list = doc.paths["/v1/agents"].get;
  assert.deepEqual(list.parameters.map((p: { name: string }) => p.name), [
    "limit",
    "cursor",
  ]);
});

Deno.test("docs: /docs is one self-contained HTML page (no scripts, no remote assets) listing every endpoint", async () => {
  await using stack = await startStack();
  const docs = await stack.request("GET", "/docs");
  assert.equal(docs.status, 200);
  assert.match(docs.headers.get("content-type") ?? "", /^text\/html/);
  assert.match(
    docs.headers.get("content-security-policy") ?? "",
    /default-src 'none'/,
  );
  assert.doesNotMatch(docs.text, /<script|<link|src=|https?:\/\//i);
  const doc = Object((await stack.request("GET", "/v1/openapi.json")).json);
  for (const path of Object.keys(doc.paths)) {
    const escaped = path.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
    assert.ok(docs.text.includes(escaped), `${path} on the page`);
  }
  for (
    const term of [
      "stop_reason",
      "max_iterations",
      "tool_call_start",
      "next_cursor",
    ]
  ) {
    assert.ok(docs.text.includes(term), term);
  }
});
