// The memory server's tokenizer: Unicode-aware words (CJK as characters and
// bigrams), English stopwords dropped and Snowball stemming, for index and query.

import { stemEnglish } from "../../platform/snowball.ts";
import type { StoredEntry } from "./model.ts";
// Words Snowball leaves apart but that mean the same (went -> go, colour ->
// color), as stems: generated from search_alias_groups.ts, so no start stems them.
import { ALIASES } from "./search_aliases.ts";

const CJK = String
  .raw`\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}`;
/** Below U+2E80 (CJK Radicals) nothing is CJK: skips the regex for most text. */
const FIRST_CJK = 0x2e80;
/** Longer tokens (base64 blobs, hashes) are cut: they only bloat the index. */
const MAX_TOKEN_CHARS = 64;

/**
 * English function words (NLTK's list, with the pieces contractions leave:
 * "I've" -> i, ve; "can't" -> ca not): questions are full of them ("what did ... do"), and their
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
    "with would y you your yours yourself yourselves ca wo sha").split(" "),
);

/**
 * A CJK run's first character; and a word, or words joined by hyphens
 * ("self-care"), which also yield their joined form. Compiled on first text:
 * the Unicode set operations cost ~1 ms, and most starts tokenize nothing.
 */
let patterns: { cjk: RegExp; token: RegExp } | undefined;
function compiled(): { cjk: RegExp; token: RegExp } {
  patterns ??= {
    cjk: new RegExp(`^[${CJK}]`, "v"),
    token: new RegExp(
      String
        .raw`[[\p{L}\p{M}\p{N}]&&[${CJK}]]+|[[\p{L}\p{M}\p{N}]--[${CJK}]]+(?:[\-\u2010\u2011][[\p{L}\p{M}\p{N}]--[${CJK}]]+)*`,
      "gv",
    ),
  };
  return patterns;
}
const HYPHEN_RE = /[-\u2010\u2011]/;
/** Text with no character above U+007F. */
const ASCII_RE = /^[\0-\x7f]*$/;
/** TOKEN_RE's words in lowercased ASCII text: letters and digits, joined by "-". */
const ASCII_TOKEN_RE = /[a-z0-9]+(?:-[a-z0-9]+)*/g;
/**
 * A chat turn's speaker at the start of a line: "[date] Name: text",
 * "(date) Name: text" or "Name: text" (at most four words before the colon).
 */
const SPEAKER_RE =
  /^[ \t]*(?:[[(][^\])\n]{0,60}[\])][ \t]*)?([^\s:[\]()][^:\n]{0,40}):[ \t]/gmu;
/** Marks a speaker term: the tokenizer never yields "@" otherwise. */
export const SPEAKER_MARK = "@";
/** "n't" is "not" (a stop word): "won't" -> wo not, so no "won" (-> win) is left. */
const NOT_RE = /n['\u2019]t\b/g;

/**
 * Lowercased NFKC tokens for indexing and querying. English stopwords are
 * dropped and English words stemmed (Snowball) after irregular forms meet
 * their base word (went -> go, children -> child); numbers, ordinals, number
 * words and month names meet ("three", "3rd", "03" -> 3; "Jan" -> january),
 * and hyphenated words also yield their joined form ("self-care" -> self,
 * care, selfcare). CJK runs (no
 * spaces between words) become their characters plus character bigrams, so
 * both single characters and words match, with bigrams ranking higher (rarer).
 * A chat turn's speaker ("Caroline: ...") also yields "@caroline", which
 * `queryTerms` asks for, so turns said by the person a question names rank
 * above turns that only mention them ("Wow Caroline, ...").
 * `fields: false` leaves joined forms and speaker terms out (the builtin
 * embedder: they only restate the words' features there).
 */
export function tokenize(text: string, fields = true): string[] {
  const tokens: string[] = [];
  const { cjk: CJK_RE, token: UNICODE_RE } = compiled();
  // ASCII is its own NFKC form, and its words are [a-z0-9] runs: a plainer regex finds the same ones.
  const ascii = ASCII_RE.test(text);
  const TOKEN_RE = ascii ? ASCII_TOKEN_RE : UNICODE_RE;
  let lower = (ascii ? text : text.normalize("NFKC")).toLowerCase();
  if (lower.includes("'") || lower.includes("\u2019")) {
    lower = lower.replace(NOT_RE, " not");
  }
  // match() yields plain strings: much cheaper than matchAll's match objects.
  const matches = lower.match(TOKEN_RE) ?? [];
  for (const match of matches) {
    if (!ascii && match.charCodeAt(0) >= FIRST_CJK && CJK_RE.test(match)) {
      const chars = [...match];
      for (let i = 0; i < chars.length; i++) {
        tokens.push(chars[i]);
        if (i + 1 < chars.length) tokens.push(chars[i] + chars[i + 1]);
      }
    } else if (hasHyphen(match)) {
      const parts = match.split(HYPHEN_RE);
      for (const part of parts) {
        const found = part ? term(part) : null;
        if (found !== null) tokens.push(found);
      }
      if (fields && parts.every((part) => /^\p{L}+$/u.test(part))) {
        const joined = parts.join("");
        // A joined form is kept even when it spells a stop word ("a-n" -> an).
        tokens.push(term(joined) ?? termOf(joined.slice(0, MAX_TOKEN_CHARS)));
      }
    } else {
      const found = term(match);
      if (found !== null) tokens.push(found);
    }
  }
  if (fields && lower.includes(":")) {
    for (const [, name] of lower.matchAll(SPEAKER_RE)) {
      const words = name.match(TOKEN_RE) ?? [];
      if (words.length > 4) continue;
      for (const word of words) {
        const found = term(word);
        if (found !== null) tokens.push(SPEAKER_MARK + found);
      }
    }
  }
  return tokens;
}

/** A query's terms: its tokens, and each as a speaker term (see `tokenize`). */
export function queryTerms(text: string): string[] {
  const tokens = tokenize(text);
  return [...tokens, ...tokens.map((token) => SPEAKER_MARK + token)];
}

/** HYPHEN_RE.test(word), without a regex call per token. */
function hasHyphen(word: string): boolean {
  for (let i = 0; i < word.length; i++) {
    const code = word.charCodeAt(i);
    if (code === 0x2d || code === 0x2010 || code === 0x2011) return true;
  }
  return false;
}

/** Words ending in -ed that are no past tense: Snowball would cut them ("embed" -> "emb"). */
const KEEP_ED = new Set(
  "bed embed hundred infrared kindred naked red sacred shed shred sled wed wicked"
    .split(" "),
);
/** Terms of words already seen (null for a stop word): the stemmer and the rules cost more than a map lookup. */
const TERMS = new Map<string, string | null>();
const MAX_TERMS = 50_000;

/**
 * A word's index term: null for a stop word, numbers and ordinals as plain
 * digits ("3rd", "03" -> 3), else its Snowball stem, or the stem of the word
 * it is an alias of; cached (one lookup per word, stop words included).
 */
function term(raw: string): string | null {
  const word = raw.length > MAX_TOKEN_CHARS
    ? raw.slice(0, MAX_TOKEN_CHARS)
    : raw;
  let found = TERMS.get(word);
  if (found === undefined) {
    if (TERMS.size >= MAX_TERMS) TERMS.clear();
    // A stop word is shorter than MAX_TOKEN_CHARS, so the cut word is one only if the whole is.
    found = STOPWORDS.has(word) ? null : termOf(word);
    TERMS.set(word, found);
  }
  return found;
}

/** A lowercased word's index term (null for a stop word), cached: for words a query really holds. */
export function wordTerm(word: string): string | null {
  return term(word);
}

/** `wordTerm` without the cache: for made-up words (respelling candidates) that would flood it. */
export function freshTerm(word: string): string | null {
  const cut = word.length > MAX_TOKEN_CHARS
    ? word.slice(0, MAX_TOKEN_CHARS)
    : word;
  return STOPWORDS.has(cut) ? null : termOf(cut);
}

/** `term` of a word that is no stop word, uncached. */
function termOf(word: string): string {
  const number = /^0*(\d+)(?:st|nd|rd|th)?$/.exec(word);
  if (number) return number[1];
  const stemmed = stem(word);
  return ALIASES.get(stemmed) ?? stemmed;
}

/**
 * Snowball's English stemmer (Porter2) for ASCII words of 3+ letters, so a
 * word's forms meet (store/stores/stored/storing -> "store",
 * renovating/renovation -> "renov"); other words are kept as they are.
 */
export function stem(word: string): string {
  if (word.length < 3 || !/^[a-z]+$/.test(word)) return word;
  if (KEEP_ED.has(word)) return word;
  if (word.endsWith("s") && KEEP_ED.has(word.slice(0, -1))) {
    return word.slice(0, -1);
  }
  return stemEnglish(word);
}

/** What the lexical index sees: a sensitive entry's value is ciphertext and is never indexed. */
export function indexText(entry: StoredEntry): string {
  const parts = entry.sensitive ? [entry.key] : [entry.key, entry.value];
  return [...parts, ...entry.tags].join("\n");
}
