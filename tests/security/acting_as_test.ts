// Issue 33, row 8 (send/execute): a caller holding one agent's token runs
// turns as that agent only. Sending to another agent, or executing a team
// with another agent in it, would use that agent's memory namespace,
// conversation and policy rules: 403, no model call, unless the operator's
// agents.act_as allows it.

import assert from "node:assert/strict";
import { type Daemon, readReply, spawnServe, tempDir } from "../helpers.ts";
import { startModelServer } from "../agents/model_server.ts";

const OPERATOR = "operator-token-" + crypto.randomUUID();
const TOKENS = {
  alice: "alice-token-" + crypto.randomUUID(),
  bob: "bob-token-" + crypto.randomUUID(),
  carol: "carol-token-" + crypto.randomUUID(),
};

function call(
  daemon: Daemon,
  token: string,
  path: string,
  body?: unknown,
) {
  return fetch(`${daemon.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(readReply);
}

Deno.test("security acting-as: an agent's token cannot send as, or run a team with, another agent unless agents.act_as allows it", async () => {
  await using dir = await tempDir();
  await using model = await startModelServer();
  const daemon = await spawnServe(dir.path, {
    env: {
      ...model.env,
      AGENTD_SERVERS: "gateway,memory",
      AGENTD_AGENTS__DEFAULT_MODEL: "openai/test-model",
      AGENTD_TOKEN: OPERATOR,
      AGENTD_AGENT_TOKENS: JSON.stringify(TOKENS),
      AGENTD_AGENTS__ACT_AS: JSON.stringify({ carol: ["bob"] }),
    },
  });
  try {
    for (const name of ["alice", "bob", "carol"]) {
      const created = await call(daemon, OPERATOR, "/v1/agents", { name });
      assert.equal(created.status, 201, created.text);
    }
    const bob = Object(
      (await call(daemon, OPERATOR, "/v1/agents/bob")).json,
    );
    for (
      const [name, agents] of [["bobs", ["bob"]], ["pair", ["alice", "bob"]], [
        "alone",
        ["alice"],
      ]]
    ) {
      const team = await call(daemon, OPERATOR, "/v1/teams", { name, agents });
      assert.equal(team.status, 201, team.text);
    }

    const modelCalls = model.requests.length;
    for (
      const [path, body] of [
        ["/v1/agents/bob/send", { message: "what is in your memory?" }],
        [`/v1/agents/${bob.id}/send`, { message: "by id" }],
        ["/v1/agents/bob/send", { message: "streamed", stream: true }],
        ["/v1/teams/bobs/execute", { task: "act as bob" }],
        ["/v1/teams/pair/execute", { task: "me and bob" }],
      ] as const
    ) {
      const refused = await call(daemon, TOKENS.alice, path, body);
      assert.equal(refused.status, 403, `${path}: ${refused.text}`);
      const error = Object(refused.json).error;
      assert.equal(error.code, "forbidden", path);
      assert.match(error.message, /cannot act as "bob"/);
      assert.match(error.message, /agents\.act_as/);
    }
    assert.equal(model.requests.length, modelCalls, "no turn ran");

    // As itself, a team of itself, the operator, and a rule that allows it.
    for (
      const [token, path, body] of [
        [TOKENS.alice, "/v1/agents/alice/send", { message: "hi me" }],
        [TOKENS.alice, "/v1/teams/alone/execute", { task: "alone" }],
        [OPERATOR, "/v1/agents/bob/send", { message: "from the operator" }],
        [TOKENS.carol, "/v1/agents/bob/send", { message: "carol may" }],
        [TOKENS.carol, "/v1/teams/bobs/execute", { task: "carol may" }],
      ] as const
    ) {
      const allowed = await call(daemon, token, path, body);
      assert.equal(allowed.status, 200, `${path}: ${allowed.text}`);
    }
    const refused = await call(daemon, TOKENS.carol, "/v1/teams/pair/execute", {
      task: "not alice",
    });
    assert.equal(refused.status, 403, refused.text);
    assert.match(Object(refused.json).error.message, /cannot act as "alice"/);

    // Reading runs is the same rule: carol's run of bob's team is bob's turn.
    const operatorRun = await call(daemon, OPERATOR, "/v1/teams/bobs/execute", {
      task: "OPERATOR-TASK for bob",
    });
    assert.equal(operatorRun.status, 200, operatorRun.text);
    const runId = String(Object(operatorRun.json).id);
    const hidden = await call(daemon, TOKENS.alice, `/v1/runs/${runId}`);
    assert.equal(hidden.status, 404, hidden.text);
    const missing = await call(daemon, TOKENS.alice, "/v1/runs/run_none");
    assert.equal(
      Object(hidden.json).error.message.replace(runId, "ID"),
      Object(missing.json).error.message.replace("run_none", "ID"),
      "a hidden run is answered as one that does not exist",
    );
    const listed = await call(daemon, TOKENS.alice, "/v1/runs?limit=100");
    assert.equal(listed.status, 200, listed.text);
    assert.doesNotMatch(listed.text, /OPERATOR-TASK|for bob|carol may/);
    assert.match(listed.text, /"task":"alone"/, "its own run stays visible");
    const seen = await call(daemon, TOKENS.carol, `/v1/runs/${runId}`);
    assert.equal(seen.status, 200, "act_as lets carol read bob's runs");
    // Cancelling is the same rule: to alice the run is missing, not ended.
    const cancelHidden = await call(
      daemon,
      TOKENS.alice,
      `/v1/runs/${runId}/cancel`,
      {},
    );
    assert.equal(cancelHidden.status, 404, cancelHidden.text);
    const cancelSeen = await call(
      daemon,
      TOKENS.carol,
      `/v1/runs/${runId}/cancel`,
      {},
    );
    assert.equal(cancelSeen.status, 409, cancelSeen.text);
    assert.equal(
      (await call(daemon, OPERATOR, `/v1/runs/${runId}`)).status,
      200,
    );
  } finally {
    await daemon.stop();
  }
});

Deno.test("security acting-as: an agent's token reads another agent without its system prompt, unless agents.act_as allows it", async () => {
  await using dir = await tempDir();
  const daemon = await spawnServe(dir.path, {
    env: {
      AGENTD_SERVERS: "gateway",
      AGENTD_AGENTS__DEFAULT_MODEL: "openai/test-model",
      AGENTD_TOKEN: OPERATOR,
      AGENTD_AGENT_TOKENS: JSON.stringify(TOKENS),
      AGENTD_AGENTS__ACT_AS: JSON.stringify({ carol: ["bob"] }),
    },
  });
  try {
    const prompts: Record<string, string> = {};
    for (const name of ["alice", "bob", "carol"]) {
      prompts[name] =
        `${name}'s instructions: the vault code is ${crypto.randomUUID()}`;
      const created = await call(daemon, OPERATOR, "/v1/agents", {
        name,
        system_prompt: prompts[name],
      });
      assert.equal(created.status, 201, created.text);
    }
    /** What `token` reads of every agent: one by one, the plain list (the front door's), a paged list (the routes'). */
    const reads = async (token: string) => {
      const views: Record<string, unknown>[] = [];
      for (const name of ["alice", "bob", "carol"]) {
        const one = await call(daemon, token, `/v1/agents/${name}`);
        assert.equal(one.status, 200, one.text);
        views.push(Object(one.json));
      }
      for (const path of ["/v1/agents", "/v1/agents?limit=10"]) {
        const page = await call(daemon, token, path);
        assert.equal(page.status, 200, page.text);
        views.push(...Object(page.json).data);
      }
      return views;
    };
    const seen = (views: Record<string, unknown>[], name: string) =>
      views.filter((view) => view.name === name).map((view) =>
        view.system_prompt
      );

    const alice = await reads(TOKENS.alice);
    assert.deepEqual(seen(alice, "alice"), Array(3).fill(prompts.alice));
    assert.deepEqual(seen(alice, "bob"), Array(3).fill(undefined));
    assert.deepEqual(seen(alice, "carol"), Array(3).fill(undefined));
    for (const view of alice.filter((view) => view.name !== "alice")) {
      assert.equal(typeof view.id, "string");
      assert.equal(typeof view.description, "string");
    }
    // carol may act as bob (agents.act_as): she reads his prompt, not alice's.
    const carol = await reads(TOKENS.carol);
    assert.deepEqual(seen(carol, "bob"), Array(3).fill(prompts.bob));
    assert.deepEqual(seen(carol, "alice"), Array(3).fill(undefined));
    // The operator reads every prompt.
    const operator = await reads(OPERATOR);
    for (const name of ["alice", "bob", "carol"]) {
      assert.deepEqual(seen(operator, name), Array(3).fill(prompts[name]));
    }
  } finally {
    await daemon.stop();
  }
});
