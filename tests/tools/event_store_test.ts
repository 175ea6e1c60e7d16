// The per-session SSE event store (resumption with Last-Event-ID) stays
// bounded in bytes: a long-lived session making thousands of calls must not
// keep every response it sent (the soak's RSS growth in RELIABILITY.md).

import assert from "node:assert/strict";
import { MemoryEventStore } from "../../tools/kit/transport/http_server.ts";
import { EVENT_STORE_BYTES } from "../../tools/kit/transport/event_store.ts";
import type { JSONRPCMessage } from "../../platform/mcp_sdk.ts";

function response(id: number, size: number): JSONRPCMessage {
  return {
    jsonrpc: "2.0",
    id,
    result: { content: [{ type: "text", text: "x".repeat(size) }] },
  };
}

async function replayed(
  store: MemoryEventStore,
  after: string,
): Promise<string[]> {
  const sent: string[] = [];
  await store.replayEventsAfter(after, {
    send: (eventId) => Promise.resolve(void sent.push(eventId)),
  });
  return sent;
}

Deno.test("event store: 2,000 responses of 10 KB keep at most the byte cap; recent events still replay", async () => {
  const cap = 256 * 1024;
  const store = new MemoryEventStore(500, cap);
  const ids: string[] = [];
  for (let i = 0; i < 2_000; i++) {
    ids.push(await store.storeEvent(`s${i % 4}`, response(i, 10_000)));
  }
  assert.ok(store.bytes <= cap, `${store.bytes} bytes kept`);
  assert.ok(store.count < 30, `${store.count} events kept`);
  // 100 responses back (about 1 MB ago) is gone; the last few replay.
  await assert.rejects(replayed(store, ids[1_900]), /Unknown or expired/);
  assert.deepEqual(await replayed(store, ids[1_991]), [ids[1_995], ids[1_999]]);
});

Deno.test("event store: one response bigger than the cap is still kept until the next", async () => {
  const store = new MemoryEventStore(500, 1024);
  const big = await store.storeEvent("a", response(1, 10_000));
  assert.equal(await store.getStreamIdForEventId(big), "a");
  assert.equal(store.count, 1);
  const next = await store.storeEvent("a", response(2, 10));
  assert.equal(await store.getStreamIdForEventId(big), undefined);
  assert.equal(await store.getStreamIdForEventId(next), "a");
});

Deno.test("event store: small events are bounded by count", async () => {
  const store = new MemoryEventStore(50);
  for (let i = 0; i < 1_000; i++) await store.storeEvent("a", response(i, 1));
  assert.equal(store.count, 50);
});

Deno.test("event store: 200 full sessions hold in the heap what their stores count, at most the byte cap each", async () => {
  // A heap figure needs a process of its own with a callable gc().
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--v8-flags=--expose-gc",
      new URL("../fixtures/event_store_heap.ts", import.meta.url).pathname,
    ],
    stderr: "inherit",
  }).output();
  assert.equal(output.code, 0);
  const { sessions, held, counted, events } = JSON.parse(
    new TextDecoder().decode(output.stdout),
  );
  const KIB = 1024;
  console.log(
    `${sessions} sessions, ${events} events: ${
      (held / KIB).toFixed(0)
    } KiB held, ${(counted / KIB).toFixed(0)} KiB counted`,
  );
  // The count is what the heap holds (within a fifth, plus the 200 stores
  // themselves; a response as an object tree took 1.4–1.7× its JSON)…
  assert.ok(
    held <= counted * 1.2 + sessions * KIB,
    `held ${held} bytes, counted ${counted}`,
  );
  // … and it stays within the cap of every session.
  assert.ok(
    counted <= sessions * EVENT_STORE_BYTES,
    `${counted} bytes counted`,
  );
});
