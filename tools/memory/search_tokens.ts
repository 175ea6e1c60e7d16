// The memory server's tokenizer: Unicode-aware words (CJK as characters and
// bigrams), English stopwords dropped and Snowball stemming, for index and query.

import { stemEnglish } from "../../platform/snowball.ts";
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

/**
 * English function words (NLTK's list, with the pieces contractions leave:
 * "I've" -> i, ve): questions are full of them ("what did ... do"), and their
 * small idf still adds noise over thousands of chat turns.
 */
const STOPWORDS = new Set(
  ("a about above after again against all am an and any are as at be because been before " +
    "being below between both but by can d did do does doing don down during each few for " +
    "from further had has have having he her here hers herself him himself his how i if in " +
    "into is it its itself just ll m ma me more most my myself no nor not now o of off on " +
    "once only or other our ours ourselves out over own re s same she should so some such t " +
    "than that the their theirs them themselves then there these they this those through to " +
    "too under until up ve very was we were what when where which while who whom why will " +
    "with would y you your yours yourself yourselves").split(" "),
);

/**
 * Lowercased NFKC tokens for indexing and querying. English stopwords are
 * dropped and English words stemmed (Snowball); CJK runs (no spaces between
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

/** Words ending in -ed that are no past tense: Snowball would cut them ("embed" -> "emb"). */
const KEEP_ED = new Set(
  "bed embed hundred infrared kindred naked red sacred shed shred sled wed wicked"
    .split(" "),
);
/** Stems of words already seen: the stemmer costs more than a map lookup. */
const STEMS = new Map<string, string>();
const MAX_STEMS = 50_000;

/**
 * Snowball's English stemmer (Porter2) for ASCII words of 3+ letters, so a
 * word's forms meet (store/stores/stored/storing -> "store",
 * renovating/renovation -> "renov"); other words are kept as they are.
 */
function stem(word: string): string {
  if (word.length < 3 || !/^[a-z]+$/.test(word)) return word;
  if (KEEP_ED.has(word)) return word;
  if (word.endsWith("s") && KEEP_ED.has(word.slice(0, -1))) {
    return word.slice(0, -1);
  }
  let stemmed = STEMS.get(word);
  if (stemmed === undefined) {
    if (STEMS.size >= MAX_STEMS) STEMS.clear();
    stemmed = stemEnglish(word);
    STEMS.set(word, stemmed);
  }
  return stemmed;
}

/** What the lexical index sees: a sensitive entry's value is ciphertext and is never indexed. */
export function indexText(entry: StoredEntry): string {
  const parts = entry.sensitive ? [entry.key] : [entry.key, entry.value];
  return [...parts, ...entry.tags].join("\n");
}
