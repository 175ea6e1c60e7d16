// A second dialogue set for bench/memory_dialogue_real_bench.ts, written to
// look like real multi-session chat (LoCoMo-like) rather than around the
// tokenizer: two people over many dated sessions, facts told in varied
// wording (irregular verbs, synonyms, derivations, plurals, possessives,
// contractions, hyphens, numbers as digits or words, dates in several
// formats), the listener's echo of the news ("Wow Mel, a 5K!"), follow-ups on
// the same topic, and generic small talk. Questions are phrased as a reader
// would ask them. The templates are split in two halves with a fixed seed:
// "tuning" (tune on it) and "held-out" (report only). Not a bench itself.

import { int, pick, seeded } from "./bench_lib.ts";
import {
  CHAT,
  MONTHS,
  PEOPLE,
  PETS,
  T,
  THINGS,
  WORDS,
} from "./memory_dialogue_real_data.ts";

export const REAL_SEED = 20261127;

/** One template value: the same in turn and question, or [turn form, question form]. */
export interface RealTurn {
  key: string;
  value: string;
}
export interface RealQuestion {
  namespace: string;
  text: string;
  key: string;
  half: "tuning" | "held-out";
}

/** A date as people write it: one of several formats. */
function formatDate(
  random: () => number,
  y: number,
  m: number,
  d: number,
  style = int(random, 0, 5),
): string {
  const month = MONTHS[m - 1];
  const ord = d +
    (d % 10 === 1 && d !== 11
      ? "st"
      : d % 10 === 2 && d !== 12
      ? "nd"
      : d % 10 === 3 && d !== 13
      ? "rd"
      : "th");
  const pad = (n: number) => String(n).padStart(2, "0");
  return [
    `${d} ${month}, ${y}`,
    `${month} ${d}, ${y}`,
    `${y}-${pad(m)}-${pad(d)}`,
    `${month} ${ord}`,
    `the ${ord} of ${month}`,
    `${month.slice(0, 3)} ${d}`,
  ][style];
}

/** A number as people write it: digits or words (up to twelve). */
function formatNumber(random: () => number, n: number): string {
  return n < WORDS.length && random() < 0.5 ? WORDS[n] : String(n);
}

export function realDialogues(): {
  conversations: { namespace: string; turns: RealTurn[] }[];
  questions: RealQuestion[];
} {
  const random = seeded(REAL_SEED);
  const shuffle = <V>(items: V[]): V[] => {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = int(random, 0, i);
      [copy[i], copy[j]] = [copy[j], copy[i]];
    }
    return copy;
  };
  const order = shuffle(T.map((_, i) => i));
  const tuning = new Set(order.slice(0, Math.ceil(T.length / 2)));
  const conversations: { namespace: string; turns: RealTurn[] }[] = [];
  const questions: RealQuestion[] = [];
  for (let c = 0; c < 10; c++) {
    const namespace = `real-${c}`;
    const people = [PEOPLE[2 * c], PEOPLE[2 * c + 1]];
    const shared = shuffle(T.map((_, i) => i)).slice(0, 8);
    const facts: { who: number; t: number }[] = [];
    for (const who of [0, 1]) {
      const own = shuffle(T.map((_, i) => i).filter((i) => !shared.includes(i)))
        .slice(0, 8);
      for (const t of [...shared, ...own]) facts.push({ who, t });
    }
    const sessions = 18;
    const perSession = 16;
    const slots = shuffle(Array.from({ length: sessions }, (_, i) => i));
    // Each session tells about two facts; stored turns carry the session's date.
    const bySession = new Map<number, typeof facts>();
    shuffle(facts).forEach((fact, i) => {
      const s = slots[i % sessions];
      bySession.set(s, [...(bySession.get(s) ?? []), fact]);
    });
    const dateStyle = c % 3; // a conversation keeps one way of writing session dates
    const turns: RealTurn[] = [];
    const follows: { who: number; text: string }[] = [];
    let day = 40 + int(random, 0, 30);
    for (let s = 0; s < sessions; s++) {
      day += int(random, 3, 20);
      const when = new Date(Date.UTC(2023, 0, day));
      const [y, m, d] = [
        when.getUTCFullYear(),
        when.getUTCMonth() + 1,
        when.getUTCDate(),
      ];
      const stamp = formatDate(random, y, m, d, dateStyle);
      const lines: { who: number; text: string; question?: string }[] = [];
      for (const { who, t } of bySession.get(s) ?? []) {
        const tpl = T[t];
        const answer = pick(random, tpl.answers);
        const [aTurn, aQuestion] = typeof answer === "string"
          ? [answer, answer]
          : answer;
        const k = Number(
          typeof answer === "string" && /^\d+$/.test(answer)
            ? answer
            : int(random, 2, 12),
        );
        const dd = int(random, 1, 28);
        const dm = int(random, 1, 12);
        const pet = pick(random, PETS);
        const fill = (text: string, forQuestion: boolean) =>
          text.replaceAll("{A}", forQuestion ? aQuestion : aTurn)
            .replaceAll("{B}", pick(random, THINGS))
            .replaceAll("{P}", pet)
            .replaceAll(
              "{K}",
              forQuestion ? String(k) : formatNumber(random, k),
            )
            .replaceAll(
              "{D}",
              formatDate(random, 2023, dm, dd, int(random, 1, 5)),
            )
            .replaceAll("{N}", people[who][0]);
        const text = fill(pick(random, tpl.turns), false);
        const question = fill(pick(random, tpl.questions), true);
        lines.push({
          who,
          text,
          question: tuning.has(t) ? `T${question}` : `H${question}`,
        });
        if (random() < 0.7) {
          const nick = random() < 0.5 ? people[who][1] : people[who][0];
          lines.push({
            who: 1 - who,
            text: fill(pick(random, tpl.echoes), false).replaceAll("{S}", nick),
          });
        }
        for (const f of tpl.follow ?? []) {
          follows.push({ who, text: fill(f, false) });
        }
      }
      while (lines.length < perSession) {
        const pending = follows.length > 0 && random() < 0.15;
        const line = pending
          ? follows.splice(int(random, 0, follows.length - 1), 1)[0]
          : undefined;
        const at = int(random, 0, lines.length);
        lines.splice(at, 0, line ?? { who: at % 2, text: pick(random, CHAT) });
      }
      lines.forEach((line, i) => {
        const key = `s${s + 1}-t${i + 1}`;
        const speaker = people[line.who][0];
        turns.push({ key, value: `[${stamp}] ${speaker}: ${line.text}` });
        if (line.question) {
          questions.push({
            namespace,
            key,
            text: line.question.slice(1),
            half: line.question[0] === "T" ? "tuning" : "held-out",
          });
        }
      });
    }
    conversations.push({ namespace, turns });
  }
  return { conversations, questions };
}
