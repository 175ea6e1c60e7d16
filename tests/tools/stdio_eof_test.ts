// stdio EOF: calls that arrived before stdin closed are all answered, a slow
// one included, and the process then exits 0.

import assert from "node:assert/strict";
import { responseTo, stdioSlowWrite, tempDir } from "../helpers.ts";

Deno.test("stdio: agentd answers every call that arrived before stdin closed, then exits 0", async () => {
  await using dir = await tempDir();
  const session = await stdioSlowWrite(dir.path, {
    key: "k",
    value: "v",
    delay_ms: 300,
  });
  for (let id = 3; id < 43; id++) {
    await session.send({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: { name: "test_simple_text", arguments: {} },
    });
  }
  // EOF while the slow call runs: its answer and all the others must still go out.
  const status = await session.finish();
  assert.equal(status.code, 0);
  for (let id = 1; id < 43; id++) {
    const answer = responseTo(session.stdout, id);
    assert.ok(answer !== undefined, `no answer to ${id}`);
    assert.ok("result" in answer, `answer to ${id}: ${JSON.stringify(answer)}`);
  }
  assert.match(JSON.stringify(responseTo(session.stdout, 2)), /wrote k/);
});
