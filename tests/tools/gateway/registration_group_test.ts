// A stored registration named like a group of this daemon's config (made by a
// daemon without that config, or before the rule) would join the group as a
// replica and take its calls: the gateway skips it at start, as reconciling
// does, and says so once.

import assert from "node:assert/strict";
import { createLogger } from "../../../platform/log.ts";
import { MemoryStore } from "../../../platform/store/memory.ts";
import { GatewayConfig } from "../../../tools/gateway/config.ts";
import { Gateway } from "../../../tools/gateway/gateway.ts";

Deno.test("gateway start: a stored registration named like a configured group does not join it", async () => {
  const store = new MemoryStore();
  await store.set(["registrations", "everything"], {
    name: "everything",
    url: "http://127.0.0.1:9/mcp",
    tools: null,
    registered_at: "2026-11-26T00:00:00.000Z",
    credentials: null,
  });
  await store.set(["registrations", "other"], {
    name: "other",
    url: "http://127.0.0.1:9/mcp",
    tools: null,
    registered_at: "2026-11-26T00:00:00.000Z",
    credentials: null,
  });
  const lines: Record<string, unknown>[] = [];
  const gateway = new Gateway({
    // Port 9 (discard) refuses: the upstreams stay down, which is all this needs.
    config: GatewayConfig.parse({
      health_interval_ms: 3_600_000,
      upstreams: {
        "ev-a": { url: "http://127.0.0.1:9/mcp", group: "everything" },
        "ev-b": { url: "http://127.0.0.1:9/mcp", group: "everything" },
      },
    }),
    store,
    log: createLogger({ sink: (line) => lines.push(JSON.parse(line)) }),
    peers: [],
    env: {},
    secretKey: () => Promise.reject(new Error("no credentials here")),
    toolsChanged: () => {},
    own: {
      list: () => [],
      has: () => false,
      call: () => Promise.reject(new Error("no own tools here")),
    },
  });
  try {
    await gateway.start();
    assert.deepEqual([...gateway.upstreams.keys()].sort(), [
      "ev-a",
      "ev-b",
      "other",
    ]);
    const skipped = lines.filter((line) =>
      line.event === "registration_skipped"
    );
    assert.equal(skipped.length, 1);
    assert.equal(skipped[0].upstream, "everything");
  } finally {
    await gateway.stop();
  }
});
