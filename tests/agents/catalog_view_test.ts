// The in-process view of agents and teams stays exact across two daemons on
// one store: each Repository below is a daemon's; writes through one are seen
// by the other's next read, without listing per request.

import assert from "node:assert/strict";
import { join } from "node:path";
import { Repository } from "../../agents/repository.ts";
import { IdSource } from "../../agents/ids.ts";
import type { Agent } from "../../agents/schemas.ts";
import { openKvStore } from "../../platform/store/kv.ts";
import {
  type JsonValue,
  type ListOptions,
  type ListPage,
  scoped,
  type Store,
  type StoreKey,
} from "../../platform/store/mod.ts";
import { lines, ROOT, tempDir } from "../helpers.ts";

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

/** A daemon's view of the shared store that counts its lists; `mark`: pass the store's change mark on. */
function counting(
  store: Store,
  options: { mark?: boolean } = {},
): Store & { lists: number; gets: number; hold?: Promise<void> } {
  const counted = {
    kind: store.kind,
    changeMark: options.mark ? () => store.changeMark?.() : undefined,
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

/** Another daemon in its own process, writing agents to the KV file at `path` on command. */
function writerProcess(path: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", join(ROOT, "tests/fixtures/catalog_writer.ts"), path],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const replies = lines(child.stdout);
  const input = child.stdin.getWriter();
  const encoder = new TextEncoder();
  return {
    /** The writer's answer, once its commit has returned. */
    async ask(command: string): Promise<string> {
      await input.write(encoder.encode(`${command}\n`));
      return await reply();
    },
    ready: () => reply(),
    async [Symbol.asyncDispose]() {
      await input.write(encoder.encode("quit\n")).catch(() => {});
      await input.close().catch(() => {});
      await child.status;
    },
  };
  async function reply(): Promise<string> {
    const next = await replies.next();
    if (next.done) throw new Error("the writer process ended");
    return next.value;
  }
}

Deno.test("catalog view: on a KV file, reads make no get while nobody commits, and see another process's creates and deletes at once", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "store.kv");
  const shared = await openKvStore(path);
  try {
    const counted = counting(shared, { mark: true });
    const a = new Repository(scoped(counted, ["agents"]));
    await using writer = writerProcess(path);
    assert.equal(await writer.ready(), "ready");
    assert.deepEqual((await a.listAgents({ limit: 50 })).data, []);

    const names: string[] = [];
    for (let round = 0; round < 8; round++) {
      // Nothing commits: every read answers from the view, with no get.
      const gets = counted.gets;
      for (let i = 0; i < 5; i++) {
        assert.equal(
          (await a.listAgents({ limit: 50 })).data.length,
          names.length,
        );
      }
      assert.equal(counted.gets, gets, `round ${round}: reads made gets`);

      // The other process's commit has returned: the next read must see it.
      const name = `writer-${round}`;
      const id = await writer.ask(`create ${name}`);
      names.push(name);
      assert.ok(
        (await a.listAgents({ limit: 50 })).data.some((r) => r.id === id),
        `round ${round}: a read after the other process's create missed it`,
      );
      assert.equal((await a.findAgent(id))?.name, name);
      if (round % 2 === 1) {
        const gone = names.shift() ?? "";
        assert.equal(await writer.ask(`delete ${gone}`), "deleted");
        assert.equal(await a.findAgent(gone), undefined, `round ${round}`);
        assert.ok(
          !(await a.listAgents({ limit: 50 })).data.some((r) =>
            r.name === gone
          ),
        );
      }
      assert.deepEqual(
        (await a.listAgents({ limit: 50 })).data.map((r) => r.name),
        names,
      );
    }
  } finally {
    await shared.close();
  }
});

Deno.test("catalog view: with the change mark, a read begun after another connection's write sees it even while an older get is held", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "store.kv");
  const [first, second] = await Promise.all([
    openKvStore(path),
    openKvStore(path),
  ]);
  try {
    const storeA = counting(first, { mark: true });
    const a = new Repository(storeA);
    const b = new Repository(second);
    await b.createAgent(agent("One"));
    assert.equal((await a.listAgents({ limit: 50 })).data.length, 1);
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
  } finally {
    await Promise.all([first.close(), second.close()]);
  }
});
