// The extension bridge server (svc-extension-bridge): the extensions of a
// real Chromium or Chrome as tools, over the debugging protocol on the
// configured port: list and inspect them, run actions in their service
// workers, register content scripts, and send allowed CDP commands.

import { defineServer, gatherTools, serviceRuntime } from "../kit/mod.ts";
import { TOOL_LISTINGS } from "./tool_listings.ts";
import * as actions from "./action_tools.ts";
import { ExtensionBridge } from "./bridge.ts";
import * as cdp from "./cdp_tools.ts";
import { ExtensionBridgeConfig } from "./config.ts";
import * as extensions from "./extension_tools.ts";
import * as inject from "./inject_tools.ts";

export { ExtensionBridgeConfig };

/** tools/list order (tests/tools/extension-bridge/seed_test.ts pins it); name every tool here. */
const ORDER = [
  "get_extension_state",
  "list_extensions",
  "execute_extension_action",
  "inject_content_script",
  "get_extension_permissions",
  "bridge_cdp_command",
];

export const extensionBridgeServer = defineServer<ExtensionBridge>({
  id: "extension-bridge",
  namespace: "svc-extension-bridge",
  title: "Extension bridge",
  version: "1.0.0",
  instructions:
    "Bridges to the extensions of a browser running with --remote-debugging-port: list_extensions, " +
    "get_extension_state and get_extension_permissions read them; execute_extension_action runs a named " +
    "action in an extension's service worker with its own permissions; inject_content_script registers a " +
    "script for match patterns through the owning extension; bridge_cdp_command sends an allowed CDP " +
    "command. Extension ids are 32 letters a-p.",
  config: ExtensionBridgeConfig,
  listings: TOOL_LISTINGS, // tools/list entries, generated: tools/tool_listings.ts
  tools: gatherTools(ORDER, {
    extension: extensions,
    action: actions,
    inject,
    cdp,
  }),
  async start(deps) {
    const config = ExtensionBridgeConfig.parse(deps.config);
    const bridge = new ExtensionBridge(config, deps);
    await bridge.start();
    deps.log.info("extension_bridge_ready", {
      cdp_port: config.cdp_port,
      browser: bridge.connection.state,
      cdp_allow: config.cdp_allow.length,
    });
    return serviceRuntime(bridge);
  },
});
