// The one import seam for snowball-stemmers (Snowball's English "Porter2"
// stemmer, used by the memory server's tokenizer); the package has no types.
// Deferred: the 850 KB package (every language) runs on the first word
// stemmed, not at start; most starts of the memory server stem nothing.

import defer * as snowball from "snowball-stemmers";

interface Stemmer {
  stem(word: string): string;
}

let english: Stemmer | undefined;

/** The Snowball English stem of a lowercase word. */
export function stemEnglish(word: string): string {
  english ??= englishStemmer();
  return english.stem(word);
}

/** Whether anything was stemmed yet (the package ran): start-up stems nothing. */
export function stemmerLoaded(): boolean {
  return english !== undefined;
}

function englishStemmer(): Stemmer {
  return snowball.default.newStemmer("english");
}
