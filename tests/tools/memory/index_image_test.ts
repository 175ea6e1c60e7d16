// Index images (tools/memory/index_image.ts): a start reads the local image
// of the store's snapshot instead of its parts, answers exactly as an index
// rebuilt from the entries, replays the journal over it, and never uses an
// image that is torn, damaged or of another snapshot (another save since):
// it reads the store's parts then, and writes the image again.

import assert from "node:assert/strict";
import { join } from "node:path";
import { openKvStore } from "../../../platform/store/kv.ts";
import { imageName } from "../../../tools/memory/index_image.ts";
import {
  entry,
  NS,
  openReporting,
  queries,
  rankings,
} from "./index_fixture.ts";

const N = 300;

interface Place {
  path: string;
  images: string;
  image: string;
  dir: string;
}

function place(): Place {
  const dir = Deno.makeTempDirSync({ prefix: "agentd-image-" });
  const images = join(dir, "memory-index");
  return {
    dir,
    path: join(dir, "store.kv"),
    images,
    image: join(images, imageName(NS)),
  };
}

/** N entries, then close: it saves the first snapshot and writes its image. */
async function seeded(at: Place): Promise<void> {
  const { backend } = await openReporting(await openKvStore(at.path), at);
  const writes: Promise<unknown>[] = [];
  for (let i = 0; i < N; i++) {
    writes.push(backend.put(await entry(i), "upsert"));
  }
  await Promise.all(writes);
  for (let i = 0; i < N; i += 9) await backend.delete(NS, `note-${i}`);
  await backend.close();
}

/** A start with images, its report, the reasons an image went unused, and its rankings. */
async function started(at: Place) {
  const { backend, report, logs } = await openReporting(
    await openKvStore(at.path),
    at,
  );
  try {
    const unused = logs.filter((l) => l.includes('"memory_index_image_unused"'))
      .map((l) => String(JSON.parse(l).reason));
    return {
      report,
      unused,
      results: await rankings(backend, await queries()),
    };
  } finally {
    await backend.close();
  }
}

/** Rankings of an index rebuilt from the entries (the head marked as another tokenizer's). */
async function rebuilt(at: Place) {
  const kv = await openKvStore(at.path);
  const head = (await kv.get(["x", NS]))?.value;
  assert.ok(head && typeof head === "object" && !Array.isArray(head));
  await kv.set(["x", NS], { ...head, tokenizer: "0" });
  // No images: the rebuild's own save would write one, and this start is the reference.
  const { backend, report } = await openReporting(kv);
  try {
    assert.equal(report.rebuilt, 1);
    return await rankings(backend, await queries());
  } finally {
    await backend.close();
  }
}

Deno.test("a restart reads the image of the snapshot, not the store's parts, and answers as a rebuilt index", async () => {
  const at = place();
  try {
    await seeded(at);
    const stat = await Deno.stat(at.image);
    assert.ok(stat.size > N * 256, "close wrote the image");
    // Keys and words of entries: readable by the owner only.
    if (Deno.build.os !== "windows") {
      assert.equal((stat.mode ?? 0) & 0o777, 0o600);
    }
    const first = await started(at);
    assert.deepEqual(
      [first.report.loaded, first.report.images, first.report.replayed],
      [1, 1, 0],
    );
    assert.deepEqual(first.unused, []);
    assert.ok(first.results.some((r) => r.lexical.length && r.vector.length));
    assert.deepEqual(first.results, await rebuilt(at));
  } finally {
    await Deno.remove(at.dir, { recursive: true });
  }
});

Deno.test("the journal is replayed over an image as over the store's snapshot", async () => {
  const at = place();
  try {
    await seeded(at);
    {
      const { backend } = await openReporting(await openKvStore(at.path), at);
      // Fewer than close() saves: journal rows only; the image stays the snapshot's.
      for (let i = 0; i < 20; i++) {
        await backend.put(await entry(N + i), "upsert");
        await backend.put(await entry(i * 4 + 1, 3), "upsert");
      }
      await backend.delete(NS, "note-2");
      await backend.close();
    }
    const after = await started(at);
    assert.deepEqual(
      [after.report.loaded, after.report.images, after.report.replayed],
      [1, 1, 41],
    );
    assert.deepEqual(after.results, await rebuilt(at));
  } finally {
    await Deno.remove(at.dir, { recursive: true });
  }
});

/** Each way an image can be wrong, and the reason a start gives for not using it. */
const DAMAGE: Record<string, [(at: Place) => Promise<void>, RegExp]> = {
  "torn (cut short)": [async (at) => {
    const size = (await Deno.stat(at.image)).size;
    await Deno.truncate(at.image, Math.floor(size * 0.6));
  }, /truncated/],
  "one byte changed in the vector rows": [async (at) => {
    const bytes = await Deno.readFile(at.image);
    bytes[bytes.length - 100] ^= 0x40;
    await Deno.writeFile(at.image, bytes);
  }, /checksum/],
  "one byte changed in the postings": [async (at) => {
    const bytes = await Deno.readFile(at.image);
    bytes[Math.floor(bytes.length / 3)] ^= 0x01;
    await Deno.writeFile(at.image, bytes);
  }, /checksum|header/],
  "trailing bytes": [async (at) => {
    const file = await Deno.open(at.image, { append: true });
    await file.write(new Uint8Array(64));
    file.close();
  }, /trailing/],
  "stale (of the snapshot before the last save)": [async (at) => {
    const old = await Deno.readFile(at.image);
    {
      // Enough writes that close() saves a new snapshot (and its image).
      const { backend } = await openReporting(await openKvStore(at.path), at);
      for (let i = 0; i < 150; i++) {
        await backend.put(await entry(i, 5), "upsert");
      }
      await backend.delete(NS, "note-1");
      await backend.close();
    }
    await Deno.writeFile(at.image, old);
  }, /another snapshot/],
};

for (const [name, [damage, reason]] of Object.entries(DAMAGE)) {
  Deno.test(`an image ${name} is not used: the store's snapshot is read, and the image written again`, async () => {
    const at = place();
    try {
      await seeded(at);
      await damage(at);
      const next = await started(at);
      assert.deepEqual(
        [next.report.loaded, next.report.rebuilt, next.report.images],
        [1, 0, 0],
      );
      assert.equal(next.unused.length, 1);
      assert.match(next.unused[0], reason);
      const again = await started(at);
      assert.deepEqual([again.report.images, again.unused], [1, []]);
      const reference = await rebuilt(at);
      assert.deepEqual(next.results, reference);
      assert.deepEqual(again.results, reference);
    } finally {
      await Deno.remove(at.dir, { recursive: true });
    }
  });
}

Deno.test("without an images directory a start reads the store's parts and writes no image", async () => {
  const at = place();
  try {
    await seeded(at);
    await Deno.remove(at.images, { recursive: true });
    const { backend, report } = await openReporting(await openKvStore(at.path));
    await backend.close();
    assert.deepEqual([report.loaded, report.images], [1, 0]);
    await assert.rejects(Deno.stat(at.images), Deno.errors.NotFound);
  } finally {
    await Deno.remove(at.dir, { recursive: true });
  }
});
