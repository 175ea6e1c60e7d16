// Recall of the memory server's built-in search on multi-session dialogue:
// chat turns stored one per entry, questions whose evidence is one turn,
// recall@5 and MRR@10 of that turn. Compared with plain BM25 (lowercased
// alphanumeric words, no stop words, no stemming, k1 1.2, b 0.75) over the
// same turns, the usual baseline of such benchmarks.
//
// Generated deterministically (seeded): 12 conversations between two people,
// 15 sessions of 16 turns each (2,880 turns). Each person tells facts from a
// pool of 36 hand-written templates, in the words people use in chat
// ("I've been painting ..."); the question asks in other forms of the same
// words ("What does Mia like to paint?"), as a reader of the conversation
// would. Both people of a conversation often tell the same kind of fact
// (both paint), so the question's name matters; the rest are chit-chat turns
// that reuse the topic words. Nothing here was tuned on any held-out data.
//
//   deno bench -A bench/memory_dialogue_bench.ts

import { int, pick, seeded } from "./bench_lib.ts";
import {
  dialogueSearch,
  type Mode,
  MODES,
  recallOf,
} from "./dialogue_search.ts";
import { withSlip } from "./dialogue_typos.ts";

const SEED = 20261126;
const CONVERSATIONS = 12;
const SESSIONS = 15;
const TURNS = 16;

/** A fact: the turn that tells it (X is the answer) and the question that asks for it. */
const FACTS: [turn: string, question: string, answers: string[]][] = [
  [
    "Guess what, I finally adopted a puppy last weekend! We named him X.",
    "What is the name of the puppy N adopted?",
    ["Biscuit", "Pepper", "Ziggy", "Mochi"],
  ],
  ["I've been painting a lot lately, mostly X.", "What does N like to paint?", [
    "sunsets",
    "portraits",
    "seascapes",
    "old barns",
  ]],
  [
    "We went camping at X over the long weekend, the kids loved it.",
    "Where did N go camping with the kids?",
    ["Lake Tahoe", "Yosemite", "Big Sur", "the Catskills"],
  ],
  [
    "My sister is getting married in X, I'm so excited!",
    "When is N's sister getting married?",
    ["June", "October", "the spring", "August"],
  ],
  ["I started volunteering at the X on Saturdays.", "Where does N volunteer?", [
    "animal shelter",
    "food bank",
    "children's hospital",
    "library",
  ]],
  [
    "I ran my first half marathon in X, it was brutal but worth it.",
    "Where did N run the half marathon?",
    ["Chicago", "Boston", "Denver", "Austin"],
  ],
  [
    "I've been reading X lately and honestly can't put it down.",
    "Which book has N been reading?",
    ["Dune", "Circe", "Educated", "Beloved"],
  ],
  [
    "We're thinking about moving to X next year because of my job.",
    "Where is N planning to move?",
    ["Seattle", "Portland", "Toronto", "Lisbon"],
  ],
  [
    "I signed up for pottery classes at X.",
    "Where does N take pottery classes?",
    ["the community center", "a studio downtown", "the art school", "the YMCA"],
  ],
  [
    "My daughter has her violin recital on X.",
    "When is the violin recital of N's daughter?",
    ["Friday", "the 14th", "Sunday afternoon", "May 3rd"],
  ],
  ["I got promoted to X at work last month!", "What was N promoted to?", [
    "team lead",
    "senior designer",
    "head nurse",
    "store manager",
  ]],
  [
    "I've been learning X with an app every morning.",
    "What language is N learning?",
    ["Spanish", "Japanese", "Italian", "Korean"],
  ],
  [
    "The doctor told me I have to cut back on X.",
    "What did the doctor tell N to cut back on?",
    ["coffee", "sugar", "salt", "late nights"],
  ],
  [
    "My favorite band is X, I've seen them live twice.",
    "Which band does N love?",
    ["Radiohead", "Coldplay", "the Killers", "Paramore"],
  ],
  [
    "I'm organizing a charity bake sale to raise money for X.",
    "What is N's bake sale raising money for?",
    ["the school library", "cancer research", "the shelter", "flood victims"],
  ],
  [
    "We finally finished renovating the kitchen, we went with X countertops.",
    "Which countertops did N choose for the kitchen renovation?",
    ["marble", "quartz", "butcher block", "granite"],
  ],
  [
    "I'm really stressed about the X exam next week.",
    "Which exam is N stressed about?",
    ["bar", "nursing", "driving", "chemistry"],
  ],
  [
    "My grandmother taught me how to bake X when I was little.",
    "What did N's grandmother teach her to bake?",
    ["sourdough", "apple pie", "cinnamon rolls", "baklava"],
  ],
  [
    "We celebrated our anniversary at X, the food was amazing.",
    "Where did N celebrate the anniversary?",
    [
      "a tiny Italian place",
      "the rooftop bar",
      "a sushi restaurant",
      "the beach house",
    ],
  ],
  [
    "I'm training for a triathlon in X this summer.",
    "Where is the triathlon N is training for?",
    ["Hawaii", "Florida", "Arizona", "Vermont"],
  ],
  [
    "I joined a hiking club that meets every X.",
    "When does N's hiking club meet?",
    ["Sunday morning", "other Saturday", "Wednesday evening", "first weekend"],
  ],
  [
    "Our team won the X tournament last night!",
    "Which tournament did N's team win?",
    ["bowling", "trivia", "chess", "volleyball"],
  ],
  [
    "I've started collecting vintage X.",
    "What vintage things does N collect?",
    ["cameras", "vinyl records", "postcards", "watches"],
  ],
  [
    "I had a job interview at X yesterday, fingers crossed.",
    "Where did N interview for a job?",
    ["a startup", "the hospital", "a bank", "the museum"],
  ],
  [
    "I've been photographing birds at X, I saw a heron!",
    "Where does N photograph birds?",
    ["the marsh", "the river trail", "the park", "the wetlands"],
  ],
  [
    "My son graduated from X in May, so proud of him.",
    "Where did N's son graduate from?",
    ["Stanford", "the police academy", "culinary school", "high school"],
  ],
  [
    "I donated all my old clothes to X.",
    "Where did N donate the old clothes?",
    ["Goodwill", "the church", "a women's shelter", "the Salvation Army"],
  ],
  [
    "I'm growing X on my balcony now, gardening is so relaxing.",
    "What is N growing in the garden?",
    ["tomatoes", "herbs", "strawberries", "peppers"],
  ],
  [
    "We're hosting a barbecue on X, you should come!",
    "When is N hosting the barbecue?",
    ["the Fourth of July", "Saturday", "Labor Day", "Memorial Day"],
  ],
  [
    "I finally booked our trip to X for the holidays.",
    "Where is N traveling for the holidays?",
    ["Mexico", "Iceland", "Japan", "Greece"],
  ],
  [
    "I've been struggling with insomnia since X.",
    "Since when has N struggled to sleep?",
    ["the move", "the new job", "the breakup", "spring"],
  ],
  ["I bought a X so I can bike to work.", "What bike did N buy to commute?", [
    "used road bike",
    "e-bike",
    "folding bike",
    "cargo bike",
  ]],
  [
    "I'm writing a novel about X, slowly but surely.",
    "What is N's novel about?",
    ["a lighthouse keeper", "time travel", "two sisters", "a haunted hotel"],
  ],
  ["We adopted a rescue cat and named her X.", "What is the name of N's cat?", [
    "Luna",
    "Olive",
    "Miso",
    "Cleo",
  ]],
  ["I lost my wallet at X, what a nightmare.", "Where did N lose the wallet?", [
    "the airport",
    "the concert",
    "the mall",
    "the gym",
  ]],
  [
    "My mom was diagnosed with X, we're all pretty shaken.",
    "What was N's mom diagnosed with?",
    ["diabetes", "arthritis", "pneumonia", "a heart condition"],
  ],
];

/** Chit-chat: reuses the facts' topic words without telling any fact. */
const CHAT = [
  "That sounds amazing, I'm so happy for you!",
  "How was your weekend? Did you do anything fun?",
  "Haha, I know exactly what you mean.",
  "Work has been crazy this week, I barely had time to breathe.",
  "The kids have been driving me up the wall lately.",
  "I saw a puppy at the park today and almost cried, so cute.",
  "Have you ever tried painting? I always wanted to learn.",
  "We should go hiking together sometime!",
  "My doctor is always running late, it's so annoying.",
  "I can't believe how fast this year is going.",
  "Did you watch the game last night?",
  "I need a vacation so badly.",
  "Reading before bed really helps me relax.",
  "Honestly, cooking dinner every night is exhausting.",
  "My sister keeps sending me memes at 2am.",
  "I love that! Send me pictures.",
  "We're thinking about getting a cat, but my husband is allergic.",
  "The weather has been terrible, rain every single day.",
  "Have you been to that new cafe downtown?",
  "I'm trying to drink less coffee, it's not going well.",
  "Good luck with everything, let me know how it goes!",
  "My mom called again about the holidays.",
  "Gardening sounds so peaceful, I kill every plant I touch.",
  "We had a barbecue at my parents' place, way too much food.",
  "I've been meaning to clean out my closet for months.",
  "That band was playing at the festival, right?",
  "I finished a puzzle with the kids, took us three days.",
  "Running in this heat is no joke.",
  "I should really learn a language, my brain needs it.",
  "My job is fine, nothing new to report.",
  "The traffic on the way to the airport was unreal.",
  "Bake sales are the best, I always buy too much.",
  "Interviews make me so nervous, I never know what to say.",
  "We painted the kids' room blue last week.",
  "The bike shop near me closed, so sad.",
  "Sleep has been hard with the new baby next door crying.",
  "Did you end up going to that concert?",
  "I took so many photos on our trip, I still haven't sorted them.",
  "My son wants a dog now, of course.",
  "Volunteering always puts things in perspective for me.",
];

const NAMES = [
  "Caroline",
  "Melanie",
  "Jon",
  "Gina",
  "Audrey",
  "Andrew",
  "Tim",
  "John",
  "Joanna",
  "Nate",
  "Evan",
  "Sam",
  "Maria",
  "Jolene",
  "Deborah",
  "Calvin",
  "James",
  "Priya",
  "Omar",
  "Lena",
  "Hiro",
  "Fatima",
  "Diego",
  "Nina",
];

interface Turn {
  key: string;
  value: string;
}
interface Question {
  namespace: string;
  text: string;
  key: string;
}

const random = seeded(SEED);
const conversations: { namespace: string; turns: Turn[] }[] = [];
const questions: Question[] = [];
for (let c = 0; c < CONVERSATIONS; c++) {
  const namespace = `dialogue-${c}`;
  const people = [
    NAMES[(2 * c) % NAMES.length],
    NAMES[(2 * c + 1) % NAMES.length],
  ];
  // Each person tells 14 facts; the two share about half the kinds.
  const shared = shuffle(FACTS.map((_, i) => i)).slice(0, 7);
  const facts: { person: string; fact: number }[] = [];
  for (const person of people) {
    const own = shuffle(
      FACTS.map((_, i) => i).filter((i) => !shared.includes(i)),
    )
      .slice(0, 7);
    for (const fact of [...shared, ...own]) facts.push({ person, fact });
  }
  const slots = shuffle(
    Array.from({ length: SESSIONS * TURNS }, (_, i) => i),
  ).slice(0, facts.length);
  const factAt = new Map(slots.map((slot, i) => [slot, facts[i]]));
  const turns: Turn[] = [];
  for (let s = 0; s < SESSIONS; s++) {
    const date = `${1 + int(random, 0, 27)} ${
      pick(random, ["May", "June", "July", "August"])
    } 2023`;
    for (let t = 0; t < TURNS; t++) {
      const key = `s${s + 1}-t${t + 1}`;
      const told = factAt.get(s * TURNS + t);
      const speaker = told?.person ?? people[t % 2];
      let text = pick(random, CHAT);
      if (told) {
        const [turn, question, answers] = FACTS[told.fact];
        text = turn.replace("X", pick(random, answers));
        questions.push({
          namespace,
          text: question.replace("N", told.person),
          key,
        });
      }
      turns.push({ key, value: `[${date}] ${speaker}: ${text}` });
    }
  }
  conversations.push({ namespace, turns });
}

function shuffle<T>(items: T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = int(random, 0, i);
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy;
}

const search = await dialogueSearch(conversations);
const ranked = (mode: Mode, q: Question) =>
  search.ranked(mode, q.namespace, q.text);

const rows = [];
for (const slip of [false, true]) {
  const asked = slip
    ? questions.map((q) => ({ ...q, text: withSlip(q.text, SEED) }))
    : questions;
  for (const mode of MODES) {
    rows.push({
      questions: slip ? "one slip" : "as written",
      mode,
      ...await recallOf(search, mode, asked),
    });
  }
}
console.log(
  `\nDialogue recall: ${questions.length} questions over ${
    conversations.length * SESSIONS * TURNS
  } turns in ${conversations.length} conversations (seed ${SEED})`,
);
console.table(rows);

let i = 0;
Deno.bench({
  name: "hybrid (MemoryService.search)",
  group: "dialogue search",
  n: 500,
  warmup: 50,
  fn: async () => {
    await ranked("hybrid", questions[i++ % questions.length]);
  },
});

globalThis.addEventListener("unload", () => search.close());
