// The in-page tools against the seed, letter for letter: names in the seed's
// order, its parameters, plus the optional tab_id each tool takes.

import assert from "node:assert/strict";
import { z } from "zod";
import { inPageServer } from "../../../tools/in-page/mod.ts";

const SEED: Record<string, { required: string[]; optional: string[] }> = {
  get_dom: { required: [], optional: ["selector", "include_styles"] },
  execute_js: { required: ["script"], optional: [] },
  get_page_state: { required: [], optional: [] },
  get_cookies: { required: [], optional: ["domain"] },
  set_cookies: { required: ["cookies"], optional: [] },
  get_local_storage: { required: [], optional: ["key"] },
  get_session_storage: { required: [], optional: ["key"] },
  wait_for_element: { required: ["selector"], optional: ["timeout"] },
  get_accessibility_tree: { required: [], optional: [] },
  intercept_network: { required: ["pattern"], optional: [] },
  fill_form: { required: ["selector", "value"], optional: [] },
  get_text_content: { required: ["selector"], optional: [] },
};

/** Tools that act on one tab take tab_id; set_cookies and intercept_network act on the profile. */
const PROFILE_WIDE = ["set_cookies", "intercept_network"];

function shape(schema: unknown): { properties: string[]; required: string[] } {
  assert.ok(typeof schema === "object" && schema !== null);
  const properties =
    "properties" in schema && typeof schema.properties === "object" &&
      schema.properties !== null
      ? Object.keys(schema.properties)
      : [];
  const required = "required" in schema && Array.isArray(schema.required)
    ? schema.required.map(String)
    : [];
  return { properties, required };
}

Deno.test("in-page: exactly the seed's twelve tools with its parameters", () => {
  assert.equal(inPageServer.id, "in-page");
  assert.equal(inPageServer.namespace, "svc-in-page");
  assert.deepEqual(
    inPageServer.tools.map((tool) => tool.name),
    Object.keys(SEED),
  );
  for (const tool of inPageServer.tools) {
    const { properties, required } = shape(
      z.toJSONSchema(tool.input, { io: "input" }),
    );
    const seed = SEED[tool.name];
    const extra = PROFILE_WIDE.includes(tool.name) ? [] : ["tab_id"];
    assert.deepEqual(required.toSorted(), seed.required.toSorted(), tool.name);
    assert.deepEqual(
      properties.toSorted(),
      [...seed.required, ...seed.optional, ...extra].toSorted(),
      tool.name,
    );
  }
  // A cookie to set has the seed's fields: name, value, domain, path.
  const setCookies = inPageServer.tools.find((tool) =>
    tool.name === "set_cookies"
  );
  assert.ok(setCookies);
  const schema = JSON.stringify(
    z.toJSONSchema(setCookies.input, { io: "input" }),
  );
  for (const field of ["name", "value", "domain", "path"]) {
    assert.match(schema, new RegExp(`"${field}"`));
  }
});
