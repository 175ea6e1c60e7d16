// The extension bridge server (svc-extension-bridge): the extensions of a
// real Chromium or Chrome as tools, over the debugging protocol on the
// configured port: list and inspect them, run actions in their service
// workers, register content scripts, and send allowed CDP commands.

import { defineServer } from "../kit/mod.ts";
import { TOOL_LISTINGS } from "./tool_listings.ts";
import { executeExtensionAction } from "./actions.ts";
import { ExtensionBridge } from "./bridge.ts";
import { bridgeCdpCommand } from "./cdp.ts";
import { ExtensionBridgeConfig } from "./config.ts";
import {
  getExtensionPermissions,
  getExtensionState,
  listExtensionsTool,
} from "./extensions.ts";
import { injectContentScript } from "./inject.ts";

export { ExtensionBridgeConfig };

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
  // The seed's order.
  listings: TOOL_LISTINGS, // tools/list entries, generated: tools/tool_listings.ts
  tools: [
    getExtensionState,
    listExtensionsTool,
    executeExtensionAction,
    injectContentScript,
    getExtensionPermissions,
    bridgeCdpCommand,
  ],
  async start(deps) {
    const config = ExtensionBridgeConfig.parse(deps.config);
    const bridge = new ExtensionBridge(config, {
      log: deps.log,
      dataDir: deps.dataDir,
      env: deps.env,
      ownOrigin: deps.ownOrigin,
    });
    await bridge.start();
    deps.log.info("extension_bridge_ready", {
      cdp_port: config.cdp_port,
      browser: bridge.connection.state,
      cdp_allow: config.cdp_allow.length,
    });
    return {
      context: bridge,
      health: () => bridge.health(),
      metrics: () => bridge.metrics(),
      stop: () => bridge.stop(),
    };
  },
});
