// Child process of index_crash_test.ts: writes waves of entries into a KV
// file through KvBackend, saving the index snapshot every third wave, and
// says on stdout what was acknowledged, until it is killed.
//
//   deno run -A tests/tools/memory/index_writer.ts <store.kv>

import { openKvStore } from "../../../platform/store/kv.ts";
import { KvBackend } from "../../../tools/memory/backends/kv.ts";
import { entry, NS } from "./index_fixture.ts";

const [path] = Deno.args;
const backend = await KvBackend.open(await openKvStore(path));
const out = (line: string) =>
  Deno.stdout.writeSync(new TextEncoder().encode(line + "\n"));
for (let round = 0;; round++) {
  const writes: Promise<unknown>[] = [];
  for (let j = 0; j < 20; j++) {
    writes.push(backend.put(await entry(round * 20 + j), "upsert"));
  }
  if (round > 0) {
    writes.push(backend.put(await entry(round * 7, round), "upsert"));
    writes.push(backend.delete(NS, `note-${round * 13}`));
  }
  await Promise.all(writes);
  out(`ack ${round}`);
  if (round % 3 === 2) {
    await backend.saveIndex(NS);
    out(`saved ${round}`);
  }
}
