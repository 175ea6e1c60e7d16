// Questions as people type them: one typing slip in one content word (a letter
// dropped, doubled, swapped with its neighbour or replaced by a key next to
// it), as real questions carry ("educaton", "persue", "fesetival"). The
// dialogue benches ask each question clean and with a slip, so a tokenizer
// change shows what it gains on slips and what it costs on clean text.

import { seeded } from "./bench_lib.ts";

/** Letters next to each other on a QWERTY keyboard. */
const NEIGHBOURS: Record<string, string> = {
  a: "qwsz",
  b: "vghn",
  c: "xdfv",
  d: "serfcx",
  e: "wsdr",
  f: "drtgvc",
  g: "ftyhbv",
  h: "gyujnb",
  i: "ujko",
  j: "huikmn",
  k: "jiolm",
  l: "kop",
  m: "njk",
  n: "bhjm",
  o: "iklp",
  p: "ol",
  q: "wa",
  r: "edft",
  s: "awedxz",
  t: "rfgy",
  u: "yhji",
  v: "cfgb",
  w: "qase",
  x: "zsdc",
  y: "tghu",
  z: "asx",
};

/** Words a slip is not put in: question words and the commonest short words. */
const SKIP = new Set(
  "what when where which who whom whose why how does did have has been would could should about their there these those other"
    .split(" "),
);

/**
 * `text` with one slip in one of its words of 5+ letters (the same slip for
 * the same text and seed); the text itself when it has no such word.
 */
export function withSlip(text: string, seed: number): string {
  const random = seeded(seed ^ hash(text));
  const words = [...text.matchAll(/[A-Za-z]{5,}/g)].filter((m) =>
    !SKIP.has(m[0].toLowerCase())
  );
  if (words.length === 0) return text;
  const chosen = words[Math.floor(random() * words.length)];
  const word = chosen[0];
  const at = chosen.index ?? 0;
  // Slips rarely hit the first letter; keep it.
  const i = 1 + Math.floor(random() * (word.length - 1));
  let slipped: string;
  switch (Math.floor(random() * 4)) {
    case 0: // dropped
      slipped = word.slice(0, i) + word.slice(i + 1);
      break;
    case 1: // doubled
      slipped = word.slice(0, i) + word[i] + word.slice(i);
      break;
    case 2: { // swapped with the next letter (or the one before, at the end)
      const j = i + 1 < word.length ? i : i - 1;
      slipped = word.slice(0, j) + word[j + 1] + word[j] + word.slice(j + 2);
      break;
    }
    default: { // a neighbouring key
      const near = NEIGHBOURS[word[i].toLowerCase()] ?? "e";
      slipped = word.slice(0, i) + near[Math.floor(random() * near.length)] +
        word.slice(i + 1);
    }
  }
  return text.slice(0, at) + slipped + text.slice(at + word.length);
}

function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  }
  return h >>> 0;
}
