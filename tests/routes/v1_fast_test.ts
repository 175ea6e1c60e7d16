// GET /v1/agents and /v1/teams with no query are answered before Hono
// (routes/v1_fast.ts) when the guards would have nothing to check but the
// Host: the same answer as through the app, and every other request (a
// token, an Origin, a body, a query, another method, a bad Host) goes
// through the app.

import assert from "node:assert/strict";
import { hostAdmission } from "../../platform/http_guards.ts";
import { createLogger } from "../../platform/log.ts";
import { withFastLists } from "../../routes/v1_fast.ts";
import { startStack } from "../agents/stack.ts";

const PAGE = { data: [{ id: "agt_1", name: "one" }], next_cursor: null };

function fastLists(options: { tokenRequired?: boolean } = {}) {
  const lines: Record<string, unknown>[] = [];
  const calls = { full: 0, lists: 0 };
  const fetch = withFastLists((_request: Request) => {
    calls.full++;
    return new Response("full", { status: 299 });
  }, {
    agents: {
      listAgents: () => (calls.lists++, Promise.resolve(PAGE)),
      listTeams: () => (calls.lists++, Promise.resolve({ ...PAGE, data: [] })),
    },
    admitsHost: hostAdmission({ bindHost: "127.0.0.1", allowedHosts: [] }),
    tokenRequired: options.tokenRequired ?? false,
    log: createLogger({
      level: "debug",
      sink: (line) => lines.push(JSON.parse(line)),
    }),
  });
  return { fetch, calls, lines };
}

const HOST = { host: "127.0.0.1:8765" };

Deno.test("fast lists: a plain GET of the full list is answered from the service, logged like the app's", async () => {
  const { fetch, calls, lines } = fastLists();
  const agents = await fetch(
    new Request("http://127.0.0.1:8765/v1/agents", { headers: HOST }),
  );
  assert.equal(agents.status, 200);
  assert.equal(agents.headers.get("content-type"), "application/json");
  assert.deepEqual(await agents.json(), PAGE);
  const teams = await fetch(
    new Request("http://localhost:8765/v1/teams", {
      headers: { host: "localhost:8765", accept: "application/json" },
    }),
  );
  assert.deepEqual(await teams.json(), { data: [], next_cursor: null });
  assert.deepEqual(calls, { full: 0, lists: 2 });
  const logged = lines.filter((line) => line.event === "request");
  assert.deepEqual(
    logged.map(({ method, path, status }) => ({ method, path, status })),
    [
      { method: "GET", path: "/v1/agents", status: 200 },
      { method: "GET", path: "/v1/teams", status: 200 },
    ],
  );
  assert.ok(logged.every((line) => typeof line.duration_ms === "number"));
});

Deno.test("fast lists: anything the guards or the route would look at goes through the app", async () => {
  const { fetch, calls } = fastLists();
  const cases: [string, RequestInit][] = [
    ["/v1/agents", { method: "HEAD", headers: HOST }],
    ["/v1/agents", { method: "POST", headers: HOST, body: "{}" }],
    ["/v1/agents?limit=1", { headers: HOST }],
    ["/v1/agents/", { headers: HOST }],
    ["/v1/agents/one", { headers: HOST }],
    ["/v1/runs", { headers: HOST }],
    ["/v1/agents", { headers: { host: "evil.example" } }],
    ["/v1/agents", {}],
    ["/v1/agents", { headers: { ...HOST, authorization: "Bearer x" } }],
    ["/v1/agents", { headers: { ...HOST, origin: "http://localhost:1" } }],
    ["/v1/agents", { headers: { ...HOST, "content-length": "0" } }],
    ["/v1/agents", { headers: { ...HOST, "transfer-encoding": "chunked" } }],
  ];
  for (const [path, init] of cases) {
    const before = calls.full;
    const response = await fetch(
      new Request(`http://127.0.0.1:8765${path}`, init),
    );
    assert.equal(response.status, 299, `${init.method ?? "GET"} ${path}`);
    await response.body?.cancel();
    assert.equal(calls.full, before + 1);
  }
  assert.equal(calls.lists, 0);

  const guarded = fastLists({ tokenRequired: true });
  const response = await guarded.fetch(
    new Request("http://127.0.0.1:8765/v1/agents", { headers: HOST }),
  );
  assert.equal(
    response.status,
    299,
    "a daemon token: every request to the app",
  );
  await response.body?.cancel();
});

Deno.test("fast lists: a failing list is answered by the app", async () => {
  let full = 0;
  const fetch = withFastLists((_request: Request) => {
    full++;
    return new Response("mapped", { status: 503 });
  }, {
    agents: {
      listAgents: () => Promise.reject(new Error("store down")),
      listTeams: () => Promise.reject(new Error("store down")),
    },
    admitsHost: () => true,
    tokenRequired: false,
    log: createLogger({ sink: () => {} }),
  });
  const response = await fetch(
    new Request("http://127.0.0.1:8765/v1/agents", { headers: HOST }),
  );
  assert.equal(response.status, 503);
  assert.equal(await response.text(), "mapped");
  assert.equal(full, 1);
});

Deno.test("fast lists: in the app, the same status, headers and body as the same list through Hono", async () => {
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
    // ?limit=100 takes the app's route, which answers from the same view page.
    const [fast, routed] = await Promise.all([
      stack.request("GET", `/v1/${kind}`),
      stack.request("GET", `/v1/${kind}?limit=100`),
    ]);
    assert.equal(fast.status, 200);
    assert.equal(fast.text, routed.text);
    assert.deepEqual([...fast.headers], [...routed.headers]);
    const tag = fast.headers.get("etag") ?? "";
    const [fast304, routed304] = await Promise.all(
      [`/v1/${kind}`, `/v1/${kind}?limit=100`].map((path) =>
        stack.request("GET", path, undefined, { "if-none-match": tag })
      ),
    );
    assert.equal(fast304.status, 304);
    assert.deepEqual(
      [fast304.status, [...fast304.headers], fast304.text],
      [routed304.status, [...routed304.headers], routed304.text],
    );
  }
  const foreign = await stack.request("GET", "/v1/agents", undefined, {
    host: "evil.example",
  });
  assert.equal(foreign.status, 403, "the app's Host guard still answers");
});
