// The store_memory value limit counts UTF-8 bytes, not characters.

import assert from "node:assert/strict";
import { MAX_VALUE_BYTES, value } from "../../../tools/memory/schemas.ts";

Deno.test("value: at most 1 MiB of UTF-8, however many characters", () => {
  assert.ok(value.safeParse("a".repeat(MAX_VALUE_BYTES)).success);
  assert.ok(!value.safeParse("a".repeat(MAX_VALUE_BYTES + 1)).success);
  // 3 bytes each: fewer characters than the limit, more bytes.
  const euros = Math.floor(MAX_VALUE_BYTES / 3) + 1;
  assert.ok(!value.safeParse("€".repeat(euros)).success);
  assert.ok(value.safeParse("€".repeat(euros - 1)).success);
  // 4 bytes per surrogate pair (2 UTF-16 units).
  assert.ok(!value.safeParse("😀".repeat(MAX_VALUE_BYTES / 4 + 1)).success);
  assert.ok(value.safeParse("😀".repeat(MAX_VALUE_BYTES / 4)).success);
});
