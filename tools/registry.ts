// The built-in servers. A server appears here only once it is built: the
// daemon never lists a stub.

import type { AnyServerSpec } from "./kit/mod.ts";
import { browserAutomationServer } from "./browser-automation/mod.ts";
import { extensionBridgeServer } from "./extension-bridge/mod.ts";
import { desktopControlServer } from "./desktop-control/mod.ts";
import { gatewayServer } from "./gateway/mod.ts";
import { inPageServer } from "./in-page/mod.ts";
import { memoryServer } from "./memory/mod.ts";
import { platformAuthServer } from "./platform-auth/mod.ts";

/** Every server id the architecture names, built or not, in display order. */
export const SERVER_IDS = [
  "browser-automation",
  "extension-bridge",
  "in-page",
  "desktop-control",
  "gateway",
  "memory",
  "platform-auth",
] as const;

// The gateway first (it aggregates the others), then SERVER_IDS order.
export const builtinServers: readonly AnyServerSpec[] = [
  gatewayServer,
  browserAutomationServer,
  extensionBridgeServer,
  inPageServer,
  desktopControlServer,
  memoryServer,
  platformAuthServer,
];
