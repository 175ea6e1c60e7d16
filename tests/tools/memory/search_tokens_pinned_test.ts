// The tokenizer's start-up work is done ahead of time, and these tests keep
// it honest: the alias table is generated (search_aliases.ts) and the
// tokenizer fingerprint a snapshot carries is a constant. A change of the
// alias groups, the stemmer or the tokenizer's rules fails here until the
// table is regenerated or the fingerprint set to the new value.

import assert from "node:assert/strict";
import { aliasesModule } from "../../../tools/memory/search_alias_groups.ts";
import { tokenize } from "../../../tools/memory/search_tokens.ts";
import {
  fingerprintOf,
  TOKENIZER_PROBE,
  tokenizerFingerprint,
} from "../../../tools/memory/backends/kv_index_parts.ts";

Deno.test("search_aliases.ts is what the alias groups give today", async () => {
  const file = await Deno.readTextFile(
    new URL("../../../tools/memory/search_aliases.ts", import.meta.url),
  );
  assert.equal(
    file,
    aliasesModule(),
    "regenerate: deno run -A tools/memory/search_alias_groups.ts",
  );
});

Deno.test("the pinned tokenizer fingerprint is the tokenizer's output on the probe", () => {
  assert.equal(
    tokenizerFingerprint(),
    fingerprintOf(tokenize(TOKENIZER_PROBE)),
    "the tokenizer changed: set TOKENIZER_FINGERPRINT in kv_index_parts.ts to the new value " +
      "(snapshots made before are then rebuilt on load)",
  );
});

Deno.test("aliases still meet their base word through the generated table", () => {
  assert.deepEqual(tokenize("went colours children Jan twelve"), [
    "go",
    "color",
    "child",
    "januari",
    "12",
  ]);
});

Deno.test("ASCII text takes a plainer path to the same tokens as the Unicode one", () => {
  // An em space (NFKC: a space) sends the same words down the Unicode path.
  const texts = [
    "Caroline: I won't go to the self-care talk on Jan 3rd, don't ask",
    "[1 May] Mel Smith: a-n of-the x-y-z --- 007 3RD re-do ABC-def",
    "key-1\nThe quick brown foxes' dens: it's 42 o'clock - ok?",
    `${"z".repeat(70)} ${"Q".repeat(65)}-ab, the_end (x) mel: hi`,
  ];
  for (const text of texts) {
    for (const fields of [true, false]) {
      assert.deepEqual(
        tokenize(text, fields),
        tokenize(`${text}\u2003`, fields),
        text,
      );
    }
  }
  // A joined form stays even when it spells a stop word; its parts do not.
  assert.deepEqual(tokenize("a-s"), ["as"]);
  assert.deepEqual(tokenize("a-s", false), []);
});
