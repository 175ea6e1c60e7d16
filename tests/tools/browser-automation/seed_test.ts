// The browser automation tools against the seed, letter for letter: names in
// the seed's order, required and optional parameters as clients see them.

import assert from "node:assert/strict";
import { z } from "zod";
import { browserAutomationServer } from "../../../tools/browser-automation/mod.ts";

const SEED: Record<string, { required: string[]; optional: string[] }> = {
  navigate: { required: ["url"], optional: [] },
  screenshot: { required: [], optional: ["full_page", "path"] },
  // "selector, or x and y": all optional, the choice is checked by the handler.
  click_element: { required: [], optional: ["selector", "x", "y"] },
  type_text: { required: ["selector", "text"], optional: [] },
  get_text: { required: ["selector"], optional: [] },
  get_html: { required: [], optional: ["selector"] },
  get_links: { required: [], optional: ["include_hidden"] },
  fill_form: { required: ["fields"], optional: [] },
  submit_form: { required: [], optional: ["selector"] },
  wait_for: { required: ["selector"], optional: ["timeout"] },
  execute_js: { required: ["script"], optional: [] },
  get_cookies: { required: [], optional: ["domain"] },
  scroll: { required: ["direction"], optional: ["amount"] },
  select_option: { required: ["selector", "value"], optional: [] },
};

/** Parameters added to the seed's (documented in AGENTS.md): paging of long text. */
const ADDED: Record<string, string[]> = {
  get_text: ["offset"],
  get_html: ["offset"],
};

interface Schema {
  properties?: Record<
    string,
    { type?: string; enum?: string[]; items?: Schema }
  >;
  required?: string[];
}

function schemaOf(name: string): Schema {
  const tool = browserAutomationServer.tools.find((each) => each.name === name);
  assert.ok(tool, name);
  return z.toJSONSchema(tool.input, { io: "input" }) as Schema;
}

/** Tools beyond the seed's, after its fourteen (issue 23: snapshots on a budget). Nothing else may be added. */
const EXTRA_TOOLS = ["snapshot"];

Deno.test("browser automation: exactly the seed's fourteen tools with its parameters", () => {
  assert.deepEqual(
    browserAutomationServer.tools.map((tool) => tool.name),
    [...Object.keys(SEED), ...EXTRA_TOOLS],
  );
  assert.equal(browserAutomationServer.namespace, "svc-browser-automation");
  assert.equal(browserAutomationServer.id, "browser-automation");
  for (const [name, seed] of Object.entries(SEED)) {
    const schema = schemaOf(name);
    assert.deepEqual(
      (schema.required ?? []).toSorted(),
      seed.required.toSorted(),
      name,
    );
    assert.deepEqual(
      Object.keys(schema.properties ?? {}).toSorted(),
      [...seed.required, ...seed.optional, ...ADDED[name] ?? []].toSorted(),
      name,
    );
  }
});

Deno.test("browser automation: parameter types follow the seed", () => {
  const types = (name: string) =>
    Object.fromEntries(
      Object.entries(schemaOf(name).properties ?? {}).map((
        [key, value],
      ) => [key, value.type]),
    );
  assert.deepEqual(types("navigate"), { url: "string" });
  assert.deepEqual(types("screenshot"), {
    full_page: "boolean",
    path: "string",
  });
  assert.deepEqual(types("click_element"), {
    selector: "string",
    x: "number",
    y: "number",
  });
  assert.deepEqual(types("wait_for"), {
    selector: "string",
    timeout: "integer",
  });
  assert.deepEqual(types("get_links"), { include_hidden: "boolean" });
  assert.deepEqual(schemaOf("scroll").properties?.direction.enum, [
    "up",
    "down",
  ]);
  // Form field: {selector, value}, both strings.
  const field = schemaOf("fill_form").properties?.fields.items;
  assert.deepEqual(Object.keys(field?.properties ?? {}), ["selector", "value"]);
  assert.deepEqual(field?.required, ["selector", "value"]);
});
