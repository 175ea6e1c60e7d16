// The in-process view of agents and teams stays exact across two daemons on
// one store: each Repository below is a daemon's; writes through one are seen
// by the other's next read, without listing per request.

import assert from "node:assert/strict";
import { join } from "node:path";
import { Repository } from "../../agents/repository.ts";
import { IdSource } from "../../agents/ids.ts";
import type { Agent } from "../../agents/schemas.ts";
import { openKvStore } from "../../platform/store_kv.ts";
import type {
  JsonValue,
  ListOptions,
  ListPage,
  Store,
  StoreKey,
} from "../../platform/store.ts";
import { tempDir } from "../helpers.ts";

const ids = new IdSource();

function agent(name: string): Agent {
  return {
    id: ids.next("agt"),
    name,
    model: "openai/gpt-4o-mini",
    status: "active",
    created_at: new Date().toISOString(),
    system_prompt: "",
    description: "",
    temperature: 0.7,
    max_tokens: 1024,
    tools: [],
    resolved_tools: [],
  };
}

/** A daemon's view of the shared store that counts its lists. */
function counting(
  store: Store,
): Store & { lists: number; gets: number; hold?: Promise<void> } {
  const counted = {
    kind: store.kind,
    lists: 0,
    gets: 0,
    /** While set, a get reads at once but answers only when it settles. */
    hold: undefined as Promise<void> | undefined,
    async get(key: StoreKey) {
      counted.gets++;
      const hold = counted.hold;
      const entry = await store.get(key);
      await hold;
      return entry;
    },
    getMany: (keys: readonly StoreKey[]) => store.getMany(keys),
    set: (key: StoreKey, value: JsonValue) => store.set(key, value),
    delete: (key: StoreKey) => store.delete(key),
    list(prefix: StoreKey, options?: ListOptions): Promise<ListPage> {
      counted.lists++;
      return store.list(prefix, options);
    },
    commit: (op: Parameters<Store["commit"]>[0]) => store.commit(op),
    flush: () => store.flush(),
    close: () => store.close(),
  };
  return counted;
}

/** Two repositories on one KV store, as two daemons share it; A's store counts calls. */
async function twoDaemons() {
  const dir = await tempDir();
  const shared = await openKvStore(join(dir.path, "store.kv"));
  const storeA = counting(shared);
  return {
    storeA,
    a: new Repository(storeA),
    b: new Repository(shared),
    async [Symbol.asyncDispose]() {
      await shared.close();
      await dir[Symbol.asyncDispose]();
    },
  };
}

Deno.test("catalog view: two daemons on one store see each other's creates and deletes; reads do not list", async () => {
  await using daemons = await twoDaemons();
  const { storeA, a, b } = daemons;

  assert.deepEqual(await a.listAgents({ limit: 20 }), {
    data: [],
    next_cursor: null,
  });
  const first = await b.createAgent(agent("First"));
  assert.deepEqual((await a.listAgents({ limit: 20 })).data, [first]);
  assert.deepEqual(await a.findAgent("first"), first, "by name, any case");
  assert.deepEqual(await a.findAgent(first.id), first);

  const lists = storeA.lists;
  for (let i = 0; i < 5; i++) {
    assert.equal((await a.listAgents({ limit: 20 })).data.length, 1);
    assert.deepEqual(await a.getAgent("First"), first);
  }
  assert.equal(storeA.lists, lists, "unchanged store: no list per read");

  const second = await a.createAgent(agent("Second"));
  assert.deepEqual((await b.listAgents({ limit: 20 })).data, [first, second]);
  await b.deleteAgent(first);
  assert.deepEqual((await a.listAgents({ limit: 20 })).data, [second]);
  assert.equal(await a.findAgent("First"), undefined);
  assert.equal(await a.findAgent(first.id), undefined);

  // Pages smaller than the catalog come from the store, with its cursors.
  await b.createAgent(agent("Third"));
  const page = await a.listAgents({ limit: 1 });
  assert.equal(page.data.length, 1);
  assert.ok(page.next_cursor);
  const rest = await a.listAgents({ limit: 1, cursor: page.next_cursor });
  assert.equal(rest.data[0].name, "Third");
  assert.equal(rest.next_cursor, null);
});

Deno.test("catalog view: concurrent reads share version gets, and each sees the writes that finished before it began", async () => {
  await using daemons = await twoDaemons();
  const { storeA, a, b } = daemons;
  await b.createAgent(agent("One"));
  assert.equal((await a.listAgents({ limit: 20 })).data.length, 1);

  const gets = storeA.gets;
  const pages = await Promise.all(
    Array.from({ length: 16 }, () => a.listAgents({ limit: 20 })),
  );
  assert.ok(pages.every((page) => page.data.length === 1));
  assert.ok(
    storeA.gets - gets <= 2,
    `16 concurrent reads made ${storeA.gets - gets} version gets`,
  );

  // A read starts while a version get is under way (held until released);
  // another daemon writes then; the reads begun after the write finished
  // must see it, so they cannot share the get that began before it.
  for (let round = 0; round < 5; round++) {
    const held = Promise.withResolvers<void>();
    storeA.hold = held.promise;
    const early = a.listAgents({ limit: 50 });
    storeA.hold = undefined;
    const created = await b.createAgent(agent(`Agent ${round}`));
    const late = Promise.all(
      Array.from({ length: 4 }, () => a.listAgents({ limit: 50 })),
    );
    held.resolve();
    for (const page of await late) {
      assert.ok(
        page.data.some((record) => record.id === created.id),
        `round ${round}: a read begun after the write missed it`,
      );
    }
    await early;
  }
});
