// A client that closes a streamed send cancels the turn: nothing is added
// to the conversation and nothing is logged as an error.

import assert from "node:assert/strict";
import { SendReply } from "../../agents/schemas.ts";
import { spawnServe, tempDir } from "../helpers.ts";
import { startModelServer } from "./model_server.ts";

Deno.test("stream: closing the event stream cancels the turn; the conversation does not keep it", async () => {
  await using dir = await tempDir();
  await using model = await startModelServer();
  const daemon = await spawnServe(dir.path, {
    env: { ...model.env, AGENTD_SERVERS: "gateway,memory" },
  });
  try {
    const post = (path: string, body: unknown) =>
      fetch(`${daemon.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    await (await post("/v1/agents", { name: "talker", model: "openai/m" }))
      .text();
    model.script([
      { text: "one two three four five six seven eight", chunk_delay_ms: 300 },
      { text: "fresh start" },
    ]);
    const streamed = await post("/v1/agents/talker/send", {
      message: "tell me a long story",
      stream: true,
    });
    const body = streamed.body;
    assert.ok(body);
    const reader = body.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    assert.match(first, /^event: text\n/);
    await reader.cancel();
    // Sends to one conversation queue: this one runs once the cancelled turn is gone.
    const next = await post("/v1/agents/talker/send", { message: "hello" });
    assert.equal(SendReply.parse(await next.json()).content, "fresh start");
    assert.deepEqual(model.requests.at(-1)?.body.messages, [
      { role: "user", content: "hello" },
    ]);
  } finally {
    assert.equal((await daemon.stop()).code, 0);
  }
  assert.ok(
    !daemon.logs.some((line) => line.level === "error"),
    JSON.stringify(daemon.logs.filter((l) => l.level === "error")),
  );
});
