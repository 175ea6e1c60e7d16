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
