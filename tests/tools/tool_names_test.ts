// Gateway tool names: prefix, 64-character limit, deterministic shortening.

import assert from "node:assert/strict";
import {
  gatewayName,
  MAX_TOOL_NAME,
  ORIGIN_META,
  originOf,
  withOrigin,
} from "../../tools/kit/tool_names.ts";

Deno.test("gateway names: <group>__<tool>, untouched up to 64 characters", () => {
  assert.deepEqual(gatewayName("memory", "store_memory"), {
    name: "memory__store_memory",
    shortened: false,
  });
  const exact = gatewayName("g".repeat(40), "t".repeat(22));
  assert.equal(exact.name.length, MAX_TOOL_NAME);
  assert.equal(exact.shortened, false);
});

Deno.test("gateway names: longer ones are cut with a stable hash, distinct per tool", () => {
  const group = "a-very-long-upstream-name-for-shortening";
  const one = gatewayName(group, "trigger-long-running-operation");
  const two = gatewayName(group, "trigger-long-running-operation-2");
  assert.equal(one.shortened, true);
  assert.equal(one.name.length, MAX_TOOL_NAME);
  assert.match(
    one.name,
    /^a-very-long-upstream-name-for-shortening__trig.*_[0-9a-f]{8}$/,
  );
  assert.notEqual(one.name, two.name);
  // Same input, same name: across calls, runs and machines (FNV-1a).
  assert.equal(
    gatewayName(group, "trigger-long-running-operation").name,
    one.name,
  );
  assert.equal(
    one.name,
    "a-very-long-upstream-name-for-shortening__trigger-long-_bceb0e35",
  );
});

Deno.test("origins: withOrigin names server and tool in _meta, keeping other keys; originOf reads only a well-formed one", () => {
  const listing = withOrigin({
    name: "x",
    inputSchema: { type: "object" },
    _meta: { "com.example/kept": true },
  }, { server: "memory", tool: "store_memory" });
  assert.deepEqual(listing._meta, {
    "com.example/kept": true,
    [ORIGIN_META]: { server: "memory", tool: "store_memory" },
  });
  assert.deepEqual(originOf(listing), {
    server: "memory",
    tool: "store_memory",
  });
  assert.equal(originOf({}), undefined);
  assert.equal(originOf({ _meta: { [ORIGIN_META]: "memory" } }), undefined);
  assert.equal(
    originOf({ _meta: { [ORIGIN_META]: { server: "memory" } } }),
    undefined,
  );
});
