// The registry's config sections (each server's config.ts, loaded without the
// server) are the very schemas the servers validate with, for every built-in
// server, so `serve` checks a config file exactly as before it loaded only
// the servers it runs.

import assert from "node:assert/strict";
import { builtinCatalog, catalogOf } from "../../tools/registry.ts";

Deno.test("builtinCatalog.sections(): one per built server, in start order, the spec's own schema", async () => {
  const sections = await builtinCatalog.sections();
  assert.deepEqual(sections.map((section) => section.id), builtinCatalog.ids);
  const specs = await builtinCatalog.load();
  for (const [i, spec] of specs.entries()) {
    assert.ok(spec.config, `${spec.id} has a config section`);
    assert.equal(sections[i].config, spec.config, spec.id);
  }
});

Deno.test("catalogOf(specs).sections(): the specs' ids and schemas", async () => {
  const specs = await builtinCatalog.load(["in-page", "memory"]);
  const sections = await catalogOf(specs).sections();
  assert.deepEqual(
    sections.map(({ id, config }) => ({ id, config })),
    specs.map(({ id, config }) => ({ id, config })),
  );
});
