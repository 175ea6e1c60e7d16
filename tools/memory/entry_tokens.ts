// One token pass per written entry: the builtin embedder and the lexical
// index both need the entry text's tokens. The embedder runs first (before
// the commit) and keeps the index's tokens here until the index takes them
// (after the commit), so a write tokenises once instead of twice.

import { tokenize } from "./search_tokens.ts";

/**
 * Texts kept for the index: a write is indexed a few hundred writes later at
 * most. Query embeddings are kept too (the embedder cannot tell them apart)
 * and age out; a miss only costs the second pass.
 */
const MAX_TEXTS = 1024;
/** Characters of kept texts, so a burst of large entries stays small in memory. */
const MAX_CHARS = 1_000_000;

const kept = new Map<string, string[]>();
let keptChars = 0;

/**
 * A hyphen (or a character NFKC makes one) between two characters that may
 * be letters: only there can `tokenize` add a joined form ("self-care" ->
 * selfcare). ASCII digits, punctuation and spaces stay what they are under
 * NFKC, so a hyphen next to one of them joins no all-letter parts.
 */
const MAY_JOIN =
  /[^\s\x21-\x40\x5b-\x60\x7b-\x7e][-\u2010\u2011\ufe63\uff0d][^\s\x21-\x40\x5b-\x60\x7b-\x7e]/;
/** Speaker terms start with it (search_tokens.ts); no other token does. */
const SPEAKER_MARK = 0x40; // "@"

/**
 * The builtin embedder's words of an entry's text, `tokenize(text, false)`,
 * taken from the index's `tokenize(text)`, which is kept for `indexTokens`.
 * The index's list is the embedder's plus joined forms and speaker terms
 * (last); without a possible joined form, dropping the speaker terms gives
 * the embedder's list exactly (tests/tools/memory/entry_tokens_test.ts).
 */
export function entryWords(text: string): string[] {
  const tokens = tokenize(text);
  keep(text, tokens);
  if (MAY_JOIN.test(text)) return tokenize(text, false);
  let end = tokens.length;
  while (end > 0 && tokens[end - 1].charCodeAt(0) === SPEAKER_MARK) end--;
  return end === tokens.length ? tokens : tokens.slice(0, end);
}

/** The index's tokens of `text`, `tokenize(text)`: the embedder's pass when it just made them. */
export function indexTokens(text: string): string[] {
  const tokens = kept.get(text);
  if (tokens === undefined) return tokenize(text);
  kept.delete(text);
  keptChars -= text.length;
  return tokens;
}

function keep(text: string, tokens: string[]): void {
  if (text.length > MAX_CHARS) return;
  const before = kept.get(text);
  if (before !== undefined) {
    kept.delete(text);
    keptChars -= text.length;
  }
  while (kept.size >= MAX_TEXTS || keptChars + text.length > MAX_CHARS) {
    const oldest = kept.keys().next();
    if (oldest.done) break;
    kept.delete(oldest.value);
    keptChars -= oldest.value.length;
  }
  kept.set(text, tokens);
  keptChars += text.length;
}
