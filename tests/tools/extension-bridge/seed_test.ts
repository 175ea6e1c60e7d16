// The extension bridge against the seed, letter for letter (tool names in the
// seed's order, required and optional parameters), its config defaults, and
// the CDP allow-list rule.

import assert from "node:assert/strict";
import { z } from "zod";
import {
  cdpAllowed,
  DEFAULT_CDP_ALLOW,
  ExtensionBridgeConfig,
} from "../../../tools/extension-bridge/config.ts";
import { extensionBridgeServer } from "../../../tools/extension-bridge/mod.ts";

const SEED: Record<string, { required: string[]; optional: string[] }> = {
  get_extension_state: { required: ["extension_id"], optional: [] },
  list_extensions: { required: [], optional: ["enabled_only"] },
  execute_extension_action: {
    required: ["extension_id", "action"],
    optional: ["args"],
  },
  inject_content_script: {
    required: ["extension_id", "script", "matches"],
    optional: [],
  },
  get_extension_permissions: { required: ["extension_id"], optional: [] },
  bridge_cdp_command: { required: ["command"], optional: ["params"] },
};

interface Schema {
  properties?: Record<string, unknown>;
  required?: string[];
}

Deno.test("extension bridge: exactly the seed's six tools with its parameters", () => {
  assert.equal(extensionBridgeServer.id, "extension-bridge");
  assert.equal(extensionBridgeServer.namespace, "svc-extension-bridge");
  assert.deepEqual(
    extensionBridgeServer.tools.map((tool) => tool.name),
    Object.keys(SEED),
  );
  for (const [name, seed] of Object.entries(SEED)) {
    const tool = extensionBridgeServer.tools.find((each) => each.name === name);
    assert.ok(tool, name);
    const schema: Schema = z.toJSONSchema(tool.input, { io: "input" });
    assert.deepEqual(
      (schema.required ?? []).toSorted(),
      seed.required.toSorted(),
      name,
    );
    assert.deepEqual(
      Object.keys(schema.properties ?? {}).toSorted(),
      [...seed.required, ...seed.optional].toSorted(),
      name,
    );
  }
});

Deno.test("extension bridge: config defaults and the CDP allow-list", () => {
  const config = ExtensionBridgeConfig.parse({});
  assert.equal(config.cdp_port, 9335);
  assert.deepEqual(config.cdp_allow, DEFAULT_CDP_ALLOW);
  assert.ok(
    !cdpAllowed("Runtime.evaluate", config.cdp_allow),
    "off by default",
  );
  assert.ok(cdpAllowed("Browser.getVersion", config.cdp_allow));
  assert.ok(cdpAllowed("Target.createTarget", ["Target.*"]), "a whole domain");
  assert.ok(!cdpAllowed("Targets.getTargets", ["Target.*"]));
  const bad = ExtensionBridgeConfig.safeParse({ cdp_allow: ["evaluate"] });
  assert.ok(!bad.success);
  assert.match(bad.error.issues[0].message, /Domain\.method/);
});
