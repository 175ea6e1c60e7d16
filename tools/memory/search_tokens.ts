// The memory server's tokenizer: Unicode-aware words (CJK as characters and
// bigrams), English stopwords dropped and light stemming, for index and query.

import type { StoredEntry } from "./model.ts";

const CJK = String
  .raw`\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}`;
/** CJK letter runs, or runs of other letters/marks/digits (marks keep Indic words whole). */
const TOKEN_RE = new RegExp(
  String.raw`[[\p{L}\p{M}\p{N}]&&[${CJK}]]+|[[\p{L}\p{M}\p{N}]--[${CJK}]]+`,
  "gv",
);
const CJK_RE = new RegExp(`^[${CJK}]`, "v");
/** Below U+2E80 (CJK Radicals) nothing is CJK: skips the regex for most text. */
const FIRST_CJK = 0x2e80;
/** Longer tokens (base64 blobs, hashes) are cut: they only bloat the index. */
const MAX_TOKEN_CHARS = 64;

const STOPWORDS = new Set(
  ("a an and are as at be been but by can do for from had has have he her his i if in into is it " +
    "its me my no not of on or our she so than that the their them then there these they this to " +
    "was we were what when where which who will with would you your").split(
      " ",
    ),
);

/**
 * Lowercased NFKC tokens for indexing and querying. English stopwords are
 * dropped and English words lightly stemmed; CJK runs (no spaces between
 * words) become their characters plus character bigrams, so both single
 * characters and words match, with bigrams ranking higher (rarer).
 */
export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  // match() yields plain strings: much cheaper than matchAll's match objects.
  const matches = text.normalize("NFKC").toLowerCase().match(TOKEN_RE) ?? [];
  for (const match of matches) {
    if (match.charCodeAt(0) >= FIRST_CJK && CJK_RE.test(match)) {
      const chars = [...match];
      for (let i = 0; i < chars.length; i++) {
        tokens.push(chars[i]);
        if (i + 1 < chars.length) tokens.push(chars[i] + chars[i + 1]);
      }
    } else if (!STOPWORDS.has(match)) {
      tokens.push(stem(match.slice(0, MAX_TOKEN_CHARS)));
    }
  }
  return tokens;
}

const VOWEL_RE = /[aeiouy]/;
/** Words that end in -ed without being past tenses (their inflections must meet them). */
const KEEP_ED = new Set(
  "embed hundred infrared kindred naked sacred shred wicked".split(" "),
);

/**
 * A deliberately small suffix stripper for ASCII words: plural -s/-es/-ies,
 * then one of -ing/-ed/-ly, then a final -e and a doubled final consonant.
 * It need not produce real words, only map a word's common forms to the same
 * token (store/stores/stored/storing -> "stor"; run/running -> "run").
 */
function stem(word: string): string {
  if (word.length < 3 || !/^[a-z]+$/.test(word)) return word;
  let w = word;
  if (w.length > 4 && w.endsWith("ies")) w = w.slice(0, -3) + "y";
  else if (w.endsWith("sses") || /(?:x|ch|sh|zz)es$/.test(w)) {
    w = w.slice(0, -2);
  } else if (w.length > 3 && w.endsWith("s") && !/(?:ss|us|is)$/.test(w)) {
    w = w.slice(0, -1);
  }
  const cut = (n: number, minStem: number): boolean => {
    const base = w.slice(0, -n);
    if (base.length < minStem || !VOWEL_RE.test(base)) return false;
    w = base;
    return true;
  };
  if (w.endsWith("ing")) cut(3, 2);
  else if (w.endsWith("ed") && !w.endsWith("eed") && !KEEP_ED.has(w)) {
    cut(2, 2);
  } else if (w.endsWith("ly") && !w.endsWith("ily")) cut(2, 4);
  if (w.length >= 3 && w.endsWith("e") && !w.endsWith("ee")) w = w.slice(0, -1);
  if (w.length >= 3 && w.at(-1) === w.at(-2) && !/[aeioulsz]$/.test(w)) {
    w = w.slice(0, -1);
  }
  return w;
}

/** What the lexical index sees: a sensitive entry's value is ciphertext and is never indexed. */
export function indexText(entry: StoredEntry): string {
  const parts = entry.sensitive ? [entry.key] : [entry.key, entry.value];
  return [...parts, ...entry.tags].join("\n");
}
