// The gateway's tools against the seed, letter for letter: names, required
// and optional parameters, as a client sees them in tools/list.

import assert from "node:assert/strict";
import { gatewayServer } from "../../../tools/gateway/mod.ts";
import { z } from "zod";

const SEED: Record<string, { required: string[]; optional: string[] }> = {
  list_servers: { required: [], optional: [] },
  register_server: { required: ["name", "url"], optional: ["tools"] },
  unregister_server: { required: ["name"], optional: [] },
  route_tool_call: { required: ["server", "tool", "args"], optional: [] },
  broadcast_tool_call: { required: ["tool", "args"], optional: [] },
  get_server_health: { required: ["name"], optional: [] },
  get_server_tools: { required: ["name"], optional: [] },
  discover_servers: { required: [], optional: ["network"] },
};

/**
 * Optional parameters beyond the seed's, each for a promise the seed makes
 * elsewhere: the upstream's bearer token and headers ("Remote: bearer token,
 * configurable per upstream"). Nothing else may be added.
 */
const EXTRA: Record<string, string[]> = {
  register_server: ["token", "headers"],
};

Deno.test("gateway: exactly the seed's eight tools with its parameters", () => {
  assert.deepEqual(
    gatewayServer.tools.map((tool) => tool.name),
    Object.keys(SEED),
  );
  for (const tool of gatewayServer.tools) {
    const schema = z.toJSONSchema(tool.input, { io: "input" });
    const properties = Object.keys(
      (schema as { properties?: object }).properties ?? {},
    );
    const required = (schema as { required?: string[] }).required ?? [];
    const seed = SEED[tool.name];
    assert.deepEqual(required.toSorted(), seed.required.toSorted(), tool.name);
    assert.deepEqual(
      properties.toSorted(),
      [...seed.required, ...seed.optional, ...(EXTRA[tool.name] ?? [])]
        .toSorted(),
      tool.name,
    );
  }
});
