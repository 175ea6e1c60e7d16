// kill -9 while entries are written and index snapshots saved: after the
// restart every acknowledged write is found, and search answers exactly as
// an index rebuilt from the entries.

import assert from "node:assert/strict";
import { join } from "node:path";
import { openKvStore } from "../../../platform/store/kv.ts";
import { NS, openReporting, queries, rankings } from "./index_fixture.ts";

const WRITER = new URL("./index_writer.ts", import.meta.url).pathname;

/** Runs the writer until `stop` says so after a stdout line, then kill -9; returns the last acknowledged round. */
async function writeAndKill(
  path: string,
  stop: (line: string, saves: number) => boolean,
): Promise<number> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", WRITER, path],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  let acked = -1;
  let saves = 0;
  for await (const line of lines(child.stdout)) {
    const [what, round] = line.split(" ");
    if (what === "ack") acked = Number(round);
    if (what === "saved") saves++;
    if (stop(line, saves)) {
      child.kill("SIGKILL");
      break;
    }
  }
  const status = await child.status;
  assert.equal(status.signal, "SIGKILL");
  return acked;
}

async function* lines(
  stream: ReadableStream<Uint8Array>,
): AsyncGenerator<string> {
  let buffer = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    buffer += chunk;
    let newline;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      yield buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
    }
  }
}

async function checkAfterCrash(
  path: string,
  acked: number,
  /** False where the kill may land after the save it races has finished. */
  journalLeft: boolean,
): Promise<void> {
  const { backend, report } = await openReporting(await openKvStore(path));
  let loaded;
  try {
    assert.equal(report.loaded, 1);
    if (journalLeft) assert.ok(report.replayed > 0);
    // Every entry of an acknowledged wave is there, unless a later wave
    // deleted it: wave r deletes note-<13 r>, and the writer may have
    // committed waves past the last one it acknowledged before the kill landed.
    for (let i = 0; i < (acked + 1) * 20; i++) {
      if (i % 13 === 0) continue;
      const key = `note-${i}`;
      assert.equal((await backend.get(NS, key))?.key, key);
    }
    loaded = await rankings(backend, await queries());
    assert.ok(loaded.every((r) => r.vector.length > 0));
    const lexicalHits = loaded.flatMap((r) => r.lexical.map((h) => h.key));
    for (const key of lexicalHits) assert.ok(await backend.get(NS, key), key);
  } finally {
    await backend.close();
  }
  // Rebuilt from the entries, the vectors taken from the journal and the
  // snapshot (their only copies): marked as another tokenizer's.
  const kv = await openKvStore(path);
  const head = (await kv.get(["x", NS]))?.value;
  assert.ok(head && typeof head === "object" && !Array.isArray(head));
  await kv.set(["x", NS], { ...head, tokenizer: "0" });
  const { backend: rebuilt, report: again } = await openReporting(kv);
  try {
    assert.equal(again.rebuilt, 1);
    assert.deepEqual(await rankings(rebuilt, await queries()), loaded);
  } finally {
    await rebuilt.close();
  }
}

Deno.test("kill -9 between writes and saves leaves search exact after a restart", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "agentd-index-crash-" });
  try {
    // Killed as a save starts (its parts half written, or its head not yet swapped).
    const first = join(dir, "first.kv");
    const acked = await writeAndKill(
      first,
      (line, saves) => saves >= 2 && line === "ack 8",
    );
    await checkAfterCrash(first, acked, false);
    // Killed between writes, one wave after a save (round 6 is journaled only).
    const second = join(dir, "second.kv");
    const acked2 = await writeAndKill(
      second,
      (line, saves) => saves >= 2 && line === "ack 6",
    );
    await checkAfterCrash(second, acked2, true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
