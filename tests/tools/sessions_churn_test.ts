// Clients that connect, call once and walk away (no DELETE), more of them per
// round than `session_max`: every newcomer's connect and first call succeed.
// Sessions of clients gone are evicted (their GET stream is seen closed at
// once), never a session that has just been initialized (issue 34, item 4).

import assert from "node:assert/strict";
import {
  Client,
  StreamableHTTPClientTransport,
} from "../../platform/mcp_sdk.ts";
import { spawnDaemon, tempDir } from "../helpers.ts";

const CAP = 10;
const ROUNDS = 3;
/** Clients per round: well past the cap, so each round evicts. */
const PER_ROUND = 3 * CAP;
/** Clients at once: fewer than the cap, so there is always a session left by someone. */
const AT_ONCE = 5;

/** Connects as the SDK does (its GET stream included), calls a tool, leaves without DELETE. */
async function visit(url: URL): Promise<void> {
  const client = new Client({ name: "churn", version: "1" });
  const transport = new StreamableHTTPClientTransport(url);
  try {
    await client.connect(transport);
    const result = await client.callTool({
      name: "test_simple_text",
      arguments: {},
    });
    assert.match(JSON.stringify(result), /simple text response/);
  } finally {
    // Aborts the client's fetches (the GET stream too); sends no DELETE.
    await client.close();
  }
}

/** The server's error message, without the JSON around it. */
function reason(error: unknown): string {
  const text = String(error);
  return text.match(/"message":"([^"]*)"/)?.[1] ?? text;
}

Deno.test("sessions: clients that walk away free their sessions; a newcomer is never evicted right after initialize", async () => {
  await using dir = await tempDir();
  const daemon = await spawnDaemon([
    "serve",
    "--port",
    "0",
    "--data-dir",
    dir.path,
    "--servers",
    "conformance",
  ], { env: { AGENTD_SESSION_MAX: String(CAP) } });
  try {
    const url = new URL(`${daemon.url}/mcp/conformance`);
    const failures: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      let next = 0;
      await Promise.all(
        Array.from({ length: AT_ONCE }, async () => {
          while (next < PER_ROUND) {
            next++;
            await visit(url).catch((error) =>
              failures.push(`round ${round}: ${reason(error)}`)
            );
          }
        }),
      );
    }
    if (failures.length > 0) {
      assert.fail(
        `${failures.length} of ${ROUNDS * PER_ROUND} visits failed: ` +
          failures.slice(0, 5).join(" | "),
      );
    }
  } finally {
    const status = await daemon.stop();
    assert.equal(status.code, 0);
    assert.deepEqual(daemon.stray, []);
  }
});
