import assert from "node:assert/strict";
import { respelled } from "../../../tools/memory/search_respell.ts";
import { queryTerms, SearchIndex } from "../../../tools/memory/search_index.ts";
import { tokenize } from "../../../tools/memory/search_tokens.ts";
import { KvBackend } from "../../../tools/memory/backends/kv.ts";
import { BuiltinEmbedder } from "../../../tools/memory/embedder_builtin.ts";
import { MemoryService } from "../../../tools/memory/service.ts";
import { MemoryStore } from "../../../platform/store/memory.ts";
import { createLogger } from "../../../platform/log.ts";

/** A document-frequency lookup over the terms of `texts`, counting each call. */
function vocabulary(...texts: string[]) {
  const counts = new Map<string, number>();
  for (const text of texts) {
    for (const term of new Set(tokenize(text))) {
      counts.set(term, (counts.get(term) ?? 0) + 1);
    }
  }
  let calls = 0;
  const df = (term: string) => {
    calls++;
    return counts.get(term) ?? 0;
  };
  return { df, calls: () => calls };
}

Deno.test("respelled finds the known word one slip away", () => {
  const { df } = vocabulary(
    "We went to the music festival",
    "Caroline studies education and counseling",
  );
  // A slip inside the stem: fesetival -> fesetiv, one letter from festiv.
  assert.deepEqual(respelled("When was the fesetival?", df), [
    "festiv",
    "@festiv",
  ]);
  // A slip that stops the stemmer cutting -ation: educaton -> education -> educ.
  assert.deepEqual(respelled("Her educaton plans", df), ["educ", "@educ"]);
  // Dropped, doubled, swapped letters.
  assert.deepEqual(respelled("carolne", df), ["carolin", "@carolin"]);
  assert.deepEqual(respelled("carolinne", df), ["carolin", "@carolin"]);
  assert.deepEqual(respelled("caorline", df), ["carolin", "@carolin"]);
});

Deno.test("respelled leaves known, short, stop and far words alone", () => {
  const { df, calls } = vocabulary("We went to the music festival");
  assert.deepEqual(respelled("the music festival", df), []);
  // Words under 5 letters have too many neighbours; stop words are no terms.
  assert.deepEqual(respelled("musc fest", df), []);
  assert.deepEqual(respelled("themselves", df), []);
  // Two slips away is not one.
  assert.deepEqual(respelled("fesstivvl", df), []);
  assert.ok(calls() > 0);
});

Deno.test("respelled prefers the respelling more entries hold", () => {
  const { df } = vocabulary("a cable", "the table", "a table here");
  // "zable" is one slip from both cable and table; table is in two entries.
  assert.deepEqual(respelled("zables", df), ["tabl", "@tabl"]);
});

Deno.test("respelled bounds the work a query of unknown words costs", () => {
  const { df, calls } = vocabulary("We went to the music festival");
  const words = Array.from({ length: 12 }, (_, i) => `qqqq${"xyzw"[i % 4]}${i}`)
    .join(" ").replace(/\d/g, (d) => "abcdefghij"[Number(d)]);
  assert.deepEqual(respelled(words, df), []);
  const many = calls();
  const { df: df2, calls: calls2 } = vocabulary("festival");
  // Past the fourth unknown word only the fifth's own term is looked up.
  respelled(words.split(" ").slice(0, 5).join(" "), df2);
  assert.equal(many, calls2());
});

Deno.test("the index ranks a slipped query's entry through its respelling", () => {
  const index = new SearchIndex();
  index.upsert(
    "t1",
    "Melanie: The music festival last weekend was great fun",
    null,
  );
  index.upsert("t2", "Caroline: I painted a sunset by the lake", null);
  index.upsert("t3", "Melanie: Pottery class today", null);
  const text = "When did Melanie go to the fesetival?";
  const plain = index.search({ text, terms: queryTerms(text), limit: 3 });
  const withRespell = index.search({
    text,
    terms: queryTerms(text),
    respell: (df) => respelled(text, df),
    limit: 3,
  });
  // Without respelling only "Melanie" matches, and the shorter t3 ranks first.
  assert.deepEqual(plain.lexical.map((hit) => hit.key), ["t3", "t1"]);
  assert.deepEqual(withRespell.lexical.map((hit) => hit.key), ["t1", "t3"]);
  // A query the index knows is ranked exactly as without respelling.
  const known = "pottery class";
  assert.deepEqual(
    index.search({
      text: known,
      terms: queryTerms(known),
      respell: (df) => respelled(known, df),
      limit: 3,
    }),
    index.search({ text: known, terms: queryTerms(known), limit: 3 }),
  );
});

Deno.test("search_memory and its multi-namespace form find a slipped word's entry", async () => {
  const backend = await KvBackend.open(new MemoryStore());
  const memory = new MemoryService({
    backend,
    embedder: new BuiltinEmbedder(),
    dataKey: await crypto.subtle.generateKey(
      { name: "AES-GCM", length: 256 },
      false,
      ["encrypt", "decrypt"],
    ),
    log: createLogger({ level: "error" }),
  });
  try {
    const caller = {};
    const store = (namespace: string, key: string, value: string) =>
      memory.store(caller, { namespace, key, value });
    await store("a", "fest", "Melanie: The music festival was great fun");
    await store("a", "pots", "Melanie: Pottery class today");
    await store("b", "edu", "Caroline: I want to study education");
    await store("b", "paint", "Caroline: I painted a sunset");
    const one = await memory.search(caller, "a", "Melanie's fesetival", 2);
    assert.equal(one.hits[0].key, "fest");
    assert.ok(one.hits[0].matched.includes("lexical"));
    // Each namespace is respelled against its own words.
    const many = await memory.crossReference(
      caller,
      "fesetival educaton",
      ["a", "b"],
      4,
    );
    assert.deepEqual(
      many.hits.filter((hit) => hit.matched.includes("lexical"))
        .map((hit) => hit.key).sort(),
      ["edu", "fest"],
    );
  } finally {
    await memory.stop();
    await backend.close();
  }
});

Deno.test("respelled passes over runs of letters too long to be words", () => {
  const { df, calls } = vocabulary("We went to the music festival");
  // A pasted token: its slips would be thousands of made-up strings to stem.
  const token = "q".repeat(1990);
  assert.deepEqual(respelled(`festival ${token}`, df), []);
  assert.equal(calls(), 1, "only festival's own term is looked up");
  // 24 letters is still a word; its slip is found.
  const long = "internationalisationsxyz";
  const { df: df2 } = vocabulary(long.slice(0, -1));
  assert.equal(respelled(long.slice(0, -1) + "q", df2).length, 2);
});
