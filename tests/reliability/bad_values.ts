// Generators of hostile input shared by the reliability tests, the store
// dump that proves a rejected call changed nothing, and the run length
// (normal, or AGENTD_RELIABILITY_LONG=1).

import fc from "fast-check";
import type { JsonValue, Store, StoreEntry } from "../../platform/store/mod.ts";

/** `AGENTD_RELIABILITY_LONG=1`: the soak sizes (long kill loops, 10-minute load). */
export const LONG = Deno.env.get("AGENTD_RELIABILITY_LONG") === "1";

/** Normal-run size, or the long one. */
export function sized(normal: number, long: number): number {
  return LONG ? long : normal;
}

/** A value nested `depth` levels, alternating arrays and objects. */
export function deeplyNested(depth: number): JsonValue {
  let value: JsonValue = "bottom";
  for (let i = 0; i < depth; i++) {
    value = i % 2 === 0 ? [value] : { nested: value };
  }
  return value;
}

const BOUNDARY_NUMBERS = [
  0,
  -0,
  -1,
  1,
  0.5,
  -2147483649,
  2147483648,
  4294967296,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 2,
  -Number.MAX_SAFE_INTEGER - 2,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  1e308,
  -1e308,
];

const NASTY_STRINGS = [
  "",
  " ",
  "\u0000",
  "null",
  "undefined",
  "NaN",
  "__proto__",
  "constructor",
  "../../../../etc/passwd",
  "/etc/passwd",
  "%2e%2e%2f",
  "\u202e\u0041\u200b\ufeff",
  "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 👩‍👩‍👧‍👦",
  "\ud800",
  "a".repeat(70_000),
  "<script>alert(1)</script>",
  "'; DROP TABLE x; --",
  "${jndi:ldap://x}",
  "\r\n\r\nHTTP/1.1 200 OK",
];

/** A single hostile JSON value: wrong types, huge strings, unicode, boundaries. */
export const nastyScalar: fc.Arbitrary<JsonValue> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.constantFrom(...BOUNDARY_NUMBERS),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(...NASTY_STRINGS),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ maxLength: 20 }),
  fc.integer({ min: 1_000, max: 300_000 }).map((n) => "x".repeat(n)),
);

/** Any hostile JSON value: scalars, arrays, objects, deep nesting. */
export const nastyValue: fc.Arbitrary<JsonValue> = fc.oneof(
  { weight: 5, arbitrary: nastyScalar },
  {
    weight: 1,
    arbitrary: fc.array(nastyScalar, { maxLength: 5 }),
  },
  {
    weight: 1,
    arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), nastyScalar, {
      maxKeys: 4,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 50, max: 600 }).map(deeplyNested),
  },
  {
    weight: 1,
    arbitrary: fc.array(fc.constant(0), {
      minLength: 10_000,
      maxLength: 10_001,
    }),
  },
);

/**
 * An object with some of `fields` (the target's own names, so the checks
 * behind the first one are reached) set to hostile values, plus extra keys.
 */
export function nastyObject(
  fields: readonly string[],
): fc.Arbitrary<{ [key: string]: JsonValue }> {
  const known = fields.length > 0
    ? fc.subarray([...fields], { maxLength: Math.min(8, fields.length) }).chain(
      (names) =>
        fc.tuple(...names.map(() => nastyValue)).map((values) =>
          Object.fromEntries(names.map((name, i) => [name, values[i]]))
        ),
    )
    : fc.constant({});
  const extra = fc.dictionary(
    fc.oneof(
      fc.string({ maxLength: 10 }),
      fc.constantFrom("__proto__", "constructor", "id", "version", "owner"),
    ),
    nastyValue,
    { maxKeys: 2 },
  );
  return fc.tuple(known, extra, fc.boolean()).map(([own, more, withExtra]) =>
    withExtra ? { ...more, ...own } : own
  );
}

/** Whether a key is the audit trail's: every call, rejected or not, is recorded there by design. */
function isAuditRecord(key: readonly unknown[]): boolean {
  return key.some((part, i) => part === "policy" && key[i + 1] === "audit");
}

/**
 * Every entry of a store, in key order (what a rejected call must not
 * change), less the audit trail, which records every call on purpose.
 */
export async function dumpStore(store: Store): Promise<StoreEntry[]> {
  const entries: StoreEntry[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await store.list([], { limit: 1000, cursor });
    entries.push(...page.entries.filter((entry) => !isAuditRecord(entry.key)));
    if (page.cursor === null) return entries;
    cursor = page.cursor;
  }
}
