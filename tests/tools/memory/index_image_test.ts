// Index images (tools/memory/index_image.ts): a start reads the local image
// of the store's snapshot instead of its parts, answers exactly as an index
// rebuilt from the entries, replays the journal over it, and never uses an
// image that is torn, damaged or of another snapshot (another save since):
// it reads the store's parts then, and writes the image again.

import assert from "node:assert/strict";
import { join } from "node:path";
import { openKvStore } from "../../../platform/store/kv.ts";
import {
  imageName,
  readIndexImage,
  SUM_CHUNK,
  sumsOfFile,
  writeIndexImage,
} from "../../../tools/memory/index_image.ts";
import { SearchIndex, tokenize } from "../../../tools/memory/search_index.ts";
import {
  entry,
  NS,
  openReporting,
  queries,
  random,
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

/** Keys and words in several scripts (2-, 3- and 4-byte UTF-8 too), so their byte order is not their UTF-16 order. */
const SPELLINGS = [
  "river",
  "rivers",
  "rïver",
  "фонарь",
  "灯台",
  "ﬃx",
  "\u{1F600}smile",
  "\uFF21wide",
  "b",
  "ba",
  "",
];

function spelled(i: number): string {
  return SPELLINGS[i % SPELLINGS.length];
}

function unicodeIndex(count: number): SearchIndex {
  const index = new SearchIndex();
  const next = random(7);
  for (let i = 0; i < count; i++) {
    const words = Array.from(
      { length: 3 },
      () => `${spelled(Math.floor(next() * 50))}${Math.floor(next() * 9)}`,
    );
    index.upsert(`${spelled(i)}-${i}`, words.join(" "), {
      embedder: i % 3 ? "e:4" : "f:4",
      vector: Float32Array.from([next() - 0.5, next(), 1, next()]),
    }, { tags: i % 4 ? [spelled(i + 1)] : [] });
  }
  return index;
}

/** The same writes on both: replaced, removed, removed and put back, new, and a key that was never there. */
function write(index: SearchIndex): void {
  const next = random(11);
  for (let i = 0; i < 40; i++) {
    index.upsert(`${spelled(i * 3)}-${i * 3}`, `${spelled(i)}9 lamp`, null, {
      tags: ["changed"],
    });
  }
  for (let i = 1; i < 120; i += 7) index.remove(`${spelled(i)}-${i}`);
  index.upsert(`${spelled(8)}-8`, "back again фонарь0", {
    embedder: "e:4",
    vector: Float32Array.from([next(), 1, 0, 0]),
  });
  index.upsert("新しい-key", "灯台1 river2 new", null);
  index.remove("never-there");
}

Deno.test("an image's keys and terms (read as bytes, not strings) answer as the index it was written from, before and after writes", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "agentd-image-" });
  try {
    const path = join(dir, "image.img");
    const original = unicodeIndex(300);
    await writeIndexImage(path, "snap-1", NS, original.export());
    const read = await readIndexImage(
      path,
      "snap-1",
      NS,
      (data) => SearchIndex.fromData(data),
    );
    assert.equal(read.problem, undefined);
    const loaded = read.value;
    assert.ok(loaded);
    const probe = (index: SearchIndex) => {
      const keys = [
        ...Array.from({ length: 300 }, (_, i) => `${spelled(i)}-${i}`),
        "新しい-key",
        "never-there",
        "",
        "river-0x",
      ];
      const queries = [
        ...SPELLINGS.flatMap((s) => [`${s}1 ${s}2`, `${s}9 lamp`]),
        "灯台1 river2 new back",
      ].map((text) => ({
        text,
        terms: tokenize(text),
        limit: 12,
        embedder: "e:4",
        vector: Float32Array.from([0.2, 0.5, 1, 0.1]),
      }));
      return {
        has: keys.map((k) => index.has(k)),
        metas: keys.map((k) => index.meta(k)),
        embeddings: keys.map((k) => index.embedding(k)),
        results: queries.map((q) => index.search(q)),
        all: [...index.metas()],
        size: index.size,
        tags: SPELLINGS.map((s) => index.tagCount(s)),
      };
    };
    assert.deepEqual(probe(loaded), probe(original));
    write(loaded);
    write(original);
    assert.deepEqual(probe(loaded), probe(original));
    // And its next image (exported from the loaded index) too.
    await writeIndexImage(path, "snap-2", NS, loaded.export());
    const again = await readIndexImage(
      path,
      "snap-2",
      NS,
      (data) => SearchIndex.fromData(data),
    );
    assert.ok(again.value);
    assert.deepEqual(probe(again.value), probe(original));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an image whose posting slots run past its entries is not used, though its checksum agrees (the pass checks them)", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "agentd-image-" });
  try {
    const path = join(dir, "image.img");
    const data = unicodeIndex(50).export();
    data.postingSlots[data.postingSlots.length - 1] = data.keys.length;
    await writeIndexImage(path, "snap-1", NS, data);
    const read = await readIndexImage(
      path,
      "snap-1",
      NS,
      (data) => SearchIndex.fromData(data),
    );
    assert.match(read.problem ?? "", /posting slot out of range/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the checksum's pass sums a file and finds the largest word of a range across its reads", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "agentd-image-" });
  try {
    const path = join(dir, "words");
    // Three reads and a tail that is not a whole word.
    const words = new Uint32Array((3 * SUM_CHUNK) / 4 + 5);
    const next = random(3);
    for (let i = 0; i < words.length; i++) {
      // Below the one largest word in range, with every byte in use.
      words[i] = Math.floor(next() * 0x80000000);
    }
    // Outside the range: larger, and must not count.
    words[10] = 0xfffffff0;
    words[words.length - 2] = 0xfffffff1;
    // The file ends a byte short of this word: its top byte is not summed.
    words[words.length - 1] = 0xaabbccdd;
    // Inside, in the second read (from byte 8 on).
    words[SUM_CHUNK / 4 + 7] = 0x80000001;
    const file = new Uint8Array(words.buffer).subarray(0, words.byteLength - 1);
    await Deno.writeFile(path, file);
    const sums = await sumsOfFile(path, 8, {
      start: 100,
      end: (words.length - 3) * 4,
    });
    assert.equal(sums.bytes, file.byteLength - 8);
    assert.equal(sums.max, 0x80000001);
    // The same sums word by word, the tail padded with zeros.
    const padded = new Uint8Array(words.byteLength - 8);
    padded.set(file.subarray(8));
    const expected = new Int32Array(2);
    for (const word of new Int32Array(padded.buffer)) {
      expected[0] = expected[0] + word;
      expected[1] = expected[1] + expected[0];
    }
    assert.deepEqual([sums.a, sums.b], [expected[0] >>> 0, expected[1] >>> 0]);
    const none = await sumsOfFile(path, 8);
    assert.deepEqual([none.a, none.b, none.max], [sums.a, sums.b, 0]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
