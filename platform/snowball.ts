// The one import seam for snowball-stemmers (Snowball's English "Porter2"
// stemmer, used by the memory server's tokenizer); the package has no types.

import snowball from "snowball-stemmers";

interface Stemmer {
  stem(word: string): string;
}

const english: Stemmer = snowball.newStemmer("english");

/** The Snowball English stem of a lowercase word. */
export function stemEnglish(word: string): string {
  return english.stem(word);
}
