// gatherTools: a server's tools from its `*_tools.ts` modules in the
// tools/list order, and a loud failure when the order and the tools disagree.

import assert from "node:assert/strict";
import { z } from "zod";
import { gatherTools, json, toolDefiner } from "../../tools/kit/mod.ts";

const tool = toolDefiner<null>();
const make = (name: string) =>
  tool({
    name,
    description: name,
    input: z.object({}),
    touches: [],
    handle: () => Promise.resolve(json({ name })),
  });

const first = { b: make("b"), a: make("a") };
const second = { c: make("c") };

Deno.test("gatherTools: every group's tools in the given order, each named by its group", () => {
  assert.deepEqual(
    gatherTools(["c", "a", "b"], { first, second }).map((def) => [
      def.name,
      def.group,
    ]),
    [["c", "second"], ["a", "first"], ["b", "first"]],
  );
});

Deno.test("gatherTools: a tool left out of the order, a name with no tool, or two tools of one name fail", () => {
  assert.throws(
    () => gatherTools(["a", "b"], { first, second }),
    /c is not in the order/,
  );
  assert.throws(
    () => gatherTools(["a", "b", "c", "d"], { first, second }),
    /no tool named d/,
  );
  assert.throws(
    () =>
      gatherTools(["a", "b", "c"], {
        first,
        second,
        again: { a: make("a") },
      }),
    /two tools named a/,
  );
});
