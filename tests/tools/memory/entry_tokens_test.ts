import assert from "node:assert/strict";
import fc from "fast-check";
import { entryWords, indexTokens } from "../../../tools/memory/entry_tokens.ts";
import { tokenize } from "../../../tools/memory/search_tokens.ts";

/** Texts where the two token lists differ or nearly do: joined forms, speakers, NFKC hyphens. */
const TRICKY = [
  "self-care and well-being",
  "note-1\nThe quick brown fox; the dog sleeps.\nclient-acme",
  "Caroline: I went to the LGBTQ support group yesterday",
  "[8 May 2023, 1:56 pm] Melanie: self-care is key\nCaroline: agreed",
  "(10:30) Jon Smith: don't-care attitude",
  "x\uFE63y a\uFF0Db c\u2010d e\u2011f",
  "3-d 2026-11-26 v2.9.6 a--b -lead trail- ‐ ‑",
  "é-tude naïve-café İ-x \u0301-a a-\u0301",
  "東京-大阪 東京の天気 서울-부산",
  "℡-call ﬁ-ne Ⅻ-roman",
  "speaker: only\nno speaker here: x",
  "",
];

function check(text: string): void {
  const words = entryWords(text);
  assert.deepEqual(words, tokenize(text, false), JSON.stringify(text));
  assert.deepEqual(indexTokens(text), tokenize(text), JSON.stringify(text));
}

Deno.test("entry tokens: one pass gives the embedder's and the index's lists", () => {
  for (const text of TRICKY) check(text);
});

Deno.test("entry tokens: equal to two tokenize passes on any text", () => {
  const piece = fc.oneof(
    fc.string({ unit: "grapheme", maxLength: 12 }),
    fc.constantFrom(
      "-",
      "\u2010",
      "\u2011",
      "\uFE63",
      "\uFF0D",
      ": ",
      "\n",
      " ",
      "self",
      "care",
      "Ann",
      "[1:30] ",
      "don't",
      "3rd",
    ),
  );
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 24 }), (pieces) => {
      check(pieces.join(""));
    }),
    { numRuns: 2000 },
  );
});

Deno.test("entry tokens: the index gets the kept pass once, then tokenises again", () => {
  const text = "kept once: a note about gardens";
  const words = entryWords(text);
  const first = indexTokens(text);
  assert.deepEqual(first, tokenize(text));
  assert.deepEqual(words, tokenize(text, false));
  // Taken: a second index of the same text (a replay) gets a fresh pass, equal.
  const second = indexTokens(text);
  assert.notEqual(second, first);
  assert.deepEqual(second, first);
});
