// Query words the index does not know, respelled as the nearest word it does
// know: one typing slip away (a letter dropped, added, replaced or swapped
// with its neighbour), as real questions carry ("fesetival", "educaton").
// BM25 finds nothing for such a word. The index asks for respellings only
// when a word's own term has no entry, so a query the index knows costs
// nothing more.

import { freshTerm, SPEAKER_MARK, wordTerm } from "./search_tokens.ts";

/** Shorter words have too many real words one slip away ("cart": card, cat, art). */
const MIN_LETTERS = 5;
/** Longer runs of letters are ids or pasted noise, not words: their slips cost work for nothing. */
const MAX_LETTERS = 24;
/** A query of many unknown words (a pasted id, a foreign sentence) respells this many at most. */
const MAX_WORDS = 4;
/** Of which this many may be respelled letter by letter (below: up to ~200 made-up words stemmed). */
const MAX_SPELLED = 2;
const LETTERS = "abcdefghijklmnopqrstuvwxyz";

/**
 * For each word of 5 to 24 ASCII letters in `text` whose term no entry holds
 * (`df` 0): the known term one slip from it with the most entries (on a
 * tie, the first found), and its speaker term, as `queryTerms` asks for each
 * term. Stop words are neither respelled nor respellings.
 *
 * A slip is looked for in the word's term first ("fesetival" -> fesetiv ->
 * festiv): about 450 map lookups. Only when none is known is the word itself
 * respelled, near its end, where a slip can stop the stemmer from cutting a
 * suffix ("educaton" is no -ation word, "education" -> educ).
 */
export function respelled(
  text: string,
  df: (term: string) => number,
): string[] {
  return respeller(text)(df);
}

/**
 * `respelled` for one query over several namespaces (`search_memory_multi`):
 * the slips' stems are worked out once, each namespace's `df` looks them up.
 */
export function respeller(
  text: string,
): (df: (term: string) => number) => string[] {
  const stems = new Map<string, string | null>();
  const stemmed = (slip: string) => {
    let term = stems.get(slip);
    if (term === undefined) stems.set(slip, term = freshTerm(slip));
    return term;
  };
  return (df) => respellWith(text, df, stemmed);
}

function respellWith(
  text: string,
  df: (term: string) => number,
  stemmed: (slip: string) => string | null,
): string[] {
  const found: string[] = [];
  let tried = 0;
  let spelled = 0;
  for (const [word] of text.toLowerCase().matchAll(/[a-z]+/g)) {
    if (word.length < MIN_LETTERS || word.length > MAX_LETTERS) continue;
    const own = wordTerm(word);
    if (own === null || df(own) > 0) continue;
    if (++tried > MAX_WORDS) break;
    const nearest = new Nearest(df);
    for (const variant of slips(own, 0)) nearest.consider(variant);
    if (nearest.best === null && spelled++ < MAX_SPELLED) {
      respellWord(word, Math.max(1, own.length - 2), df, stemmed, nearest);
    }
    const best = nearest.best;
    if (best !== null && !found.includes(best)) found.push(best);
  }
  return [...found, ...found.map((term) => SPEAKER_MARK + term)];
}

/**
 * Considers the terms of `word`'s slips at position `from` or later. A
 * slip's term is stemmed only if it can be known: Snowball's stem of a word
 * is a head of it, perhaps with "e" added or a last "y" made "i" (a few
 * exceptions aside: "possibility" -> possibl), so a slip none of whose heads
 * is known is passed over without stemming (most of them: ~6 µs a stem).
 */
function respellWord(
  word: string,
  from: number,
  df: (term: string) => number,
  stemmed: (slip: string) => string | null,
  nearest: Nearest,
): void {
  const known = (head: string) =>
    df(head) > 0 || df(head + "e") > 0 ||
    (head.endsWith("y") && df(head.slice(0, -1) + "i") > 0);
  // Heads shorter than the slip's position are the word's own.
  let ownHeadKnown = false;
  for (let k = 1; k <= from && !ownHeadKnown; k++) {
    ownHeadKnown = known(word.slice(0, k));
  }
  for (let i = from; i <= word.length; i++) {
    if (i > from) ownHeadKnown ||= known(word.slice(0, i));
    for (const slip of slipsAt(word, i)) {
      let worth = ownHeadKnown;
      for (let k = i + 1; k <= slip.length && !worth; k++) {
        worth = known(slip.slice(0, k));
      }
      const term = worth ? stemmed(slip) : null;
      if (term !== null) nearest.consider(term);
    }
  }
}

/** The known term with the most entries among those considered. */
class Nearest {
  best: string | null = null;
  #most = 0;
  readonly #df: (term: string) => number;

  constructor(df: (term: string) => number) {
    this.#df = df;
  }

  consider(term: string): void {
    const count = this.#df(term);
    if (count > this.#most) {
      this.best = term;
      this.#most = count;
    }
  }
}

/** Every string one slip from `word`, the slip at position `from` or later (repeats possible). */
function* slips(word: string, from: number): Generator<string> {
  for (let i = from; i <= word.length; i++) yield* slipsAt(word, i);
}

/** The strings one slip from `word` at position `i`: a letter added before it, or it dropped, replaced or swapped with the next. */
function* slipsAt(word: string, i: number): Generator<string> {
  const head = word.slice(0, i);
  for (const letter of LETTERS) yield head + letter + word.slice(i);
  if (i === word.length) return;
  const tail = word.slice(i + 1);
  yield head + tail;
  for (const letter of LETTERS) {
    if (letter !== word[i]) yield head + letter + tail;
  }
  if (i + 1 < word.length && word[i] !== word[i + 1]) {
    yield head + word[i + 1] + word[i] + word.slice(i + 2);
  }
}
