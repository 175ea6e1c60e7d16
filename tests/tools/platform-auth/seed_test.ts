// The platform-auth tools against the seed, letter for letter: names,
// required and optional parameters, as a client sees them in tools/list.

import assert from "node:assert/strict";
import { z } from "zod";
import { platformAuthServer } from "../../../tools/platform-auth/mod.ts";

const SEED: Record<string, { required: string[]; optional: string[] }> = {
  authenticate: { required: ["platform"], optional: ["method"] },
  get_token: { required: ["platform"], optional: [] },
  refresh_token: { required: ["platform"], optional: [] },
  revoke_token: { required: ["platform"], optional: [] },
  list_platforms: { required: [], optional: [] },
  add_platform: { required: ["platform", "config"], optional: [] },
  remove_platform: { required: ["platform"], optional: [] },
  get_auth_status: { required: ["platform"], optional: [] },
  oauth_callback: { required: ["code", "state"], optional: [] },
  validate_token: { required: ["platform", "token"], optional: [] },
};

Deno.test("platform-auth: exactly the seed's ten tools with its parameters", () => {
  assert.equal(platformAuthServer.id, "platform-auth");
  assert.equal(platformAuthServer.namespace, "svc-platform-auth");
  assert.deepEqual(
    platformAuthServer.tools.map((tool) => tool.name),
    Object.keys(SEED),
  );
  for (const tool of platformAuthServer.tools) {
    const schema = z.toJSONSchema(tool.input, { io: "input" });
    const properties = Object.keys(
      (schema as { properties?: object }).properties ?? {},
    );
    const required = (schema as { required?: string[] }).required ?? [];
    const seed = SEED[tool.name];
    assert.deepEqual(required.toSorted(), seed.required.toSorted(), tool.name);
    assert.deepEqual(
      properties.toSorted(),
      [...seed.required, ...seed.optional].toSorted(),
      tool.name,
    );
  }
  const method = z.toJSONSchema(platformAuthServer.tools[0].input, {
    io: "input",
  });
  assert.match(JSON.stringify(method.properties?.method), /"oauth","api_key"/);
});
