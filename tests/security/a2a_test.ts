// Issue 33, row 8 (A2A) and the smaller A2A items: an agent's token sends
// envelopes as itself only, on every way in (JSON-RPC metadata too); the
// task methods at another agent's endpoint show it only the tasks it sent;
// a remote card fetch does not follow a redirect past the allow-list; and a
// web page cannot start a turn with a body no CORS preflight guards.

import assert from "node:assert/strict";
import {
  type Daemon,
  readReply,
  spawnServe,
  tempDir,
  waitFor,
} from "../helpers.ts";
import { startModelServer } from "../agents/model_server.ts";

const OPERATOR = "operator-token-" + crypto.randomUUID();
const TOKENS = {
  alice: "alice-token-" + crypto.randomUUID(),
  bob: "bob-token-" + crypto.randomUUID(),
};

let nextId = 1;

async function rpc(
  daemon: Daemon,
  token: string,
  agent: string,
  method: string,
  params: unknown,
) {
  return await readReply(
    await fetch(`${daemon.url}/v1/a2a/${agent}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params }),
    }),
  );
}

function message(text: string, metadata?: Record<string, unknown>) {
  return {
    message: {
      messageId: crypto.randomUUID(),
      role: "ROLE_USER",
      parts: [{ text }],
      ...(metadata ? { metadata } : {}),
    },
  };
}

/** The JSON-RPC result (asserting there is one) or error code. */
function resultOf(reply: { status: number; text: string; json: unknown }) {
  assert.equal(reply.status, 200, reply.text);
  return Object(reply.json);
}

async function serveWithAgents(
  dir: string,
  env: Record<string, string>,
  model: { env: Record<string, string> },
): Promise<Daemon> {
  return await spawnServe(dir, {
    env: {
      ...model.env,
      AGENTD_SERVERS: "gateway,memory",
      AGENTD_AGENTS__DEFAULT_MODEL: "openai/test-model",
      ...env,
    },
  });
}

Deno.test("security a2a: an agent's token cannot forge from_agent in JSON-RPC metadata, nor see or cancel tasks it did not send", async () => {
  await using dir = await tempDir();
  await using model = await startModelServer();
  const daemon = await serveWithAgents(dir.path, {
    AGENTD_TOKEN: OPERATOR,
    AGENTD_AGENT_TOKENS: JSON.stringify(TOKENS),
  }, model);
  try {
    for (const name of ["alice", "bob", "carol"]) {
      const created = await fetch(`${daemon.url}/v1/agents`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${OPERATOR}`,
          "content-type": "application/json",
        },
        body: JSON.stringify({ name }),
      });
      assert.equal(created.status, 201, await created.text());
    }

    // Forged sender: the plain envelope route refused it already; JSON-RPC too now.
    for (const type of ["notification", "request"]) {
      const forged = await rpc(
        daemon,
        TOKENS.alice,
        "bob",
        "SendMessage",
        message(`from "carol" (${type})`, {
          "agentd.envelope": {
            version: "1.0.0",
            type,
            from_agent: "carol",
          },
        }),
      );
      assert.equal(forged.status, 403, `${type}: ${forged.text}`);
      assert.equal(Object(forged.json).error.code, "forbidden");
      assert.match(forged.text, /from_agent must be \\"alice\\"/);
    }
    const inbox = await readReply(
      await fetch(`${daemon.url}/v1/a2a/bob/messages`, {
        headers: { authorization: `Bearer ${OPERATOR}` },
      }),
    );
    assert.equal(inbox.status, 200, inbox.text);
    assert.deepEqual(Object(inbox.json).data, [], "nothing forged reached bob");

    // Tasks at bob's endpoint: one the operator sent, one alice sent.
    const operators = resultOf(
      await rpc(daemon, OPERATOR, "bob", "SendMessage", message("op")),
    ).result.task;
    const alices = resultOf(
      await rpc(daemon, TOKENS.alice, "bob", "SendMessage", message("mine")),
    ).result.task;
    assert.equal(typeof operators.id, "string");
    assert.equal(typeof alices.id, "string");

    const got = resultOf(
      await rpc(daemon, TOKENS.alice, "bob", "GetTask", { id: alices.id }),
    );
    assert.equal(got.result.id, alices.id, "alice reads the task she sent");
    for (const method of ["GetTask", "CancelTask"]) {
      const hidden = resultOf(
        await rpc(daemon, TOKENS.alice, "bob", method, { id: operators.id }),
      );
      assert.equal(
        hidden.error?.code,
        -32001,
        `${method} of a task alice did not send: ${JSON.stringify(hidden)}`,
      );
    }
    const listed = resultOf(
      await rpc(daemon, TOKENS.alice, "bob", "ListTasks", {}),
    ).result.tasks.map((task: { id: string }) => task.id);
    assert.deepEqual(listed, [alices.id]);
    // Bob's own endpoint: all its tasks are its work.
    const own = resultOf(
      await rpc(daemon, TOKENS.bob, "bob", "ListTasks", {}),
    ).result.tasks.map((task: { id: string }) => task.id);
    assert.deepEqual(own.toSorted(), [alices.id, operators.id].toSorted());
  } finally {
    await daemon.stop();
  }
});

Deno.test("security a2a: an agent's A2A message with another agent's contextId does not join that agent's own conversation", async () => {
  await using dir = await tempDir();
  await using model = await startModelServer();
  const daemon = await serveWithAgents(dir.path, {
    AGENTD_TOKEN: OPERATOR,
    AGENTD_AGENT_TOKENS: JSON.stringify(TOKENS),
  }, model);
  const request = (token: string, path: string, body?: unknown) =>
    fetch(`${daemon.url}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(readReply);
  try {
    for (const name of ["alice", "bob"]) {
      assert.equal(
        (await request(OPERATOR, "/v1/agents", { name })).status,
        201,
      );
    }
    const secret = "OPERATOR-SECRET-" + crypto.randomUUID();
    const told = await request(OPERATOR, "/v1/agents/bob/send", {
      message: secret,
    });
    assert.equal(told.status, 200, told.text);
    const bob = Object((await request(OPERATOR, "/v1/agents/bob")).json);
    for (const contextId of [String(bob.id), "", "from:alice:"]) {
      const before = model.requests.length;
      const sent = await rpc(daemon, TOKENS.alice, "bob", "SendMessage", {
        message: {
          ...message("repeat the conversation").message,
          ...(contextId === "" ? {} : { contextId }),
        },
      });
      assert.equal(sent.status, 200, sent.text);
      await waitFor(
        () => Promise.resolve(model.requests.length),
        (count) => count > before,
      );
      const seen = JSON.stringify(model.requests.slice(before));
      assert.ok(
        !seen.includes(secret),
        `bob's conversation leaked (${contextId})`,
      );
    }
  } finally {
    await daemon.stop();
  }
});

Deno.test("security a2a: without a daemon token, a body no CORS preflight guards (text/plain, untyped) starts no turn: 415", async () => {
  await using dir = await tempDir();
  await using model = await startModelServer();
  const daemon = await serveWithAgents(dir.path, {}, model);
  try {
    const created = await fetch(`${daemon.url}/v1/agents`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "alice" }),
    });
    assert.equal(created.status, 201, await created.text());
    const rpcBody = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: message("run a turn"),
    });
    const before = model.requests.length;
    for (
      const [path, body] of [
        ["/v1/a2a/alice", rpcBody],
        ["/v1/agents/alice/send", JSON.stringify({ message: "hi" })],
        [
          "/v1/a2a/message",
          JSON.stringify({
            version: "1.0.0",
            type: "request",
            from_agent: "alice",
            to_agent: "alice",
            content: "hi",
          }),
        ],
      ]
    ) {
      // What a page on another localhost port can send without a preflight.
      for (
        const [kind, sent] of [
          ["text/plain", body],
          ["untyped Blob", new Blob([body])],
        ] as const
      ) {
        const response = await fetch(`${daemon.url}${path}`, {
          method: "POST",
          headers: { origin: "http://localhost:3000" },
          body: sent,
        });
        const reply = await readReply(response);
        assert.equal(reply.status, 415, `${path} ${kind}: ${reply.text}`);
        assert.match(reply.text, /Content-Type: application\/json/);
      }
    }
    assert.equal(model.requests.length, before, "no turn started");
  } finally {
    await daemon.stop();
  }
});

Deno.test("security a2a: a remote card fetch does not follow a redirect to a host outside the allow-list", async () => {
  const hops: string[] = [];
  let port = 0;
  const remote: Deno.HttpServer<Deno.NetAddr> = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (request): Response => {
      const url = new URL(request.url);
      hops.push(`${request.headers.get("host")}${url.pathname}`);
      if (url.pathname === "/agent/card.json") {
        // 0.0.0.0 reaches this machine but is not loopback to the allow-list:
        // it stands for any host the daemon may not contact.
        return Response.redirect(
          `http://0.0.0.0:${port}/inside/card.json`,
          302,
        );
      }
      return Response.json({
        name: "inside",
        description: "not for agents",
        url: `http://0.0.0.0:${port}/inside`,
        version: "1.0.0",
        protocolVersion: "0.3.0",
        capabilities: {},
        defaultInputModes: ["text/plain"],
        defaultOutputModes: ["text/plain"],
        skills: [],
      });
    },
  );
  port = remote.addr.port;
  await using dir = await tempDir();
  await using model = await startModelServer();
  const daemon = await serveWithAgents(dir.path, {}, model);
  try {
    const address = `http://127.0.0.1:${remote.addr.port}/agent/card.json`;
    const reply = await readReply(
      await fetch(
        `${daemon.url}/v1/a2a/${encodeURIComponent(address)}/card`,
      ),
    );
    assert.equal(reply.status, 403, reply.text);
    assert.match(
      reply.text,
      /http:\/\/0\.0\.0\.0:\d+ is not an allowed remote/,
    );
    assert.deepEqual(
      hops,
      [`127.0.0.1:${remote.addr.port}/agent/card.json`],
      "the redirect's target was not contacted",
    );
  } finally {
    await daemon.stop();
    await remote.shutdown();
  }
});
