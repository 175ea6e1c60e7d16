// The app's router keeps each (method, path)'s match: the same handlers and
// parameters as Hono's own router, for every path, whether kept or not.

import assert from "node:assert/strict";
import { Hono } from "hono";
import { MemoRouter } from "../../routes/memo_router.ts";

function app(router?: MemoRouter<never>) {
  const app = router ? new Hono({ router }) : new Hono();
  app.use(async (c, next) => {
    await next();
    c.header("x-seen", "1");
  });
  // POST /v1/a2a/message beside /v1/a2a/:agent is what makes Hono fall back to its TrieRouter.
  app.post("/v1/a2a/message", (c) => c.text("message"));
  app.post("/v1/a2a/:agent", (c) => c.text(`rpc ${c.req.param("agent")}`));
  app.get("/v1/agents", (c) => c.text("list"));
  app.get("/v1/agents/:ref", (c) => c.text(`agent ${c.req.param("ref")}`));
  app.delete("/v1/agents/:ref", (c) => c.text(`deleted ${c.req.param("ref")}`));
  app.notFound((c) => c.text(`nothing at ${c.req.method} ${c.req.path}`, 404));
  return app;
}

Deno.test("MemoRouter: every request answers as with Hono's own router, the first time and every time after", async () => {
  const plain = app();
  const memo = app(new MemoRouter());
  const requests: [string, string][] = [
    ["GET", "/v1/agents"],
    ["HEAD", "/v1/agents"],
    ["GET", "/v1/agents/alpha"],
    ["GET", "/v1/agents/beta"],
    ["DELETE", "/v1/agents/alpha"],
    ["POST", "/v1/agents/alpha"],
    ["POST", "/v1/a2a/message"],
    ["POST", "/v1/a2a/gamma"],
    ["GET", "/v1/a2a/gamma"],
    ["GET", "/nowhere"],
    ["GET", `/v1/agents/${"long".repeat(100)}`],
  ];
  for (let round = 0; round < 3; round++) {
    for (const [method, path] of requests) {
      const [want, got] = await Promise.all([plain, memo].map(async (a) => {
        const response = await a.request(path, { method });
        return [
          response.status,
          await response.text(),
          response.headers.get("x-seen"),
        ];
      }));
      assert.deepEqual(got, want, `${method} ${path}, round ${round}`);
    }
  }
  assert.match(memo.router.name, /^MemoRouter \+ SmartRouter \+ TrieRouter$/);
});

Deno.test("MemoRouter: keeps a bounded number of matches, and stays right past the bound", async () => {
  const router = new MemoRouter<never>();
  const memo = app(router);
  for (let i = 0; i < 1200; i++) {
    const response = await memo.request(`/v1/agents/a${i}`);
    assert.equal(await response.text(), `agent a${i}`);
    assert.ok(router.size <= 512, `${router.size} matches kept`);
  }
  assert.ok(router.size > 0);
  for (let i = 0; i < 1200; i += 97) {
    const response = await memo.request(`/v1/agents/a${i}`);
    assert.equal(await response.text(), `agent a${i}`);
  }
});
