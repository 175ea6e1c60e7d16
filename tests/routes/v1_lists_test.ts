// GET /v1/agents and /v1/teams with no query string are answered by the
// app's front door once every guard passed (routes/mod.ts, plainLists in
// routes/api/v1_http.ts): the same status, headers and body as the routes
// give the same list, and the guards still refuse what they refused.

import assert from "node:assert/strict";
import { startStack } from "../agents/stack.ts";

Deno.test("plain lists: the same status, headers and body as the same list through the routes", async () => {
  await using stack = await startStack({ noServers: true });
  for (const name of ["a", "b"]) {
    assert.equal(
      (await stack.request("POST", "/v1/agents", { name })).status,
      201,
    );
  }
  assert.equal(
    (await stack.request("POST", "/v1/teams", { name: "t", agents: ["a"] }))
      .status,
    201,
  );
  for (const kind of ["agents", "teams"]) {
    // ?limit=100 takes the route, which answers from the same view page.
    const [plain, routed] = await Promise.all([
      stack.request("GET", `/v1/${kind}`),
      stack.request("GET", `/v1/${kind}?limit=100`),
    ]);
    assert.equal(plain.status, 200);
    assert.equal(plain.text, routed.text);
    assert.deepEqual([...plain.headers], [...routed.headers]);
    const tag = plain.headers.get("etag") ?? "";
    const [plain304, routed304] = await Promise.all(
      [`/v1/${kind}`, `/v1/${kind}?limit=100`].map((path) =>
        stack.request("GET", path, undefined, { "if-none-match": tag })
      ),
    );
    assert.equal(plain304.status, 304);
    assert.deepEqual(
      [plain304.status, [...plain304.headers], plain304.text],
      [routed304.status, [...routed304.headers], routed304.text],
    );
  }
  const logged = stack.logs.filter((line) =>
    line.event === "request" && line.path === "/v1/agents" &&
    line.method === "GET" && line.status === 200
  );
  assert.ok(logged.length >= 1, "the plain list is logged like any request");

  const foreign = await stack.request("GET", "/v1/agents", undefined, {
    host: "evil.example",
  });
  assert.equal(foreign.status, 403, "the Host guard still answers");
  const wrong = await stack.request("GET", "/v1/teams", undefined, {
    authorization: "Bearer wrong-token-0123456789",
  });
  assert.equal(wrong.status, 401, "the caller guard still answers");
  const origin = await stack.request("GET", "/v1/agents", undefined, {
    origin: "https://evil.example",
  });
  assert.equal(origin.status, 403, "the Origin guard still answers");
});
