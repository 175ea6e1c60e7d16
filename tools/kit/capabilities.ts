// The MCP capabilities a server declares, from its spec alone: what its
// sessions say at initialize, and what `serve` shows of a server it has not
// loaded yet (generated into tools/<id>/tool_listings.ts).

import type { ServerCapabilities } from "../../platform/mcp_sdk_types.ts";
import type { AnyServerSpec } from "./mod.ts";
import { runsTasks } from "./tasks.ts";

export function capabilitiesOfSpec(spec: AnyServerSpec): ServerCapabilities {
  const capabilities: ServerCapabilities = {
    tools: { listChanged: true },
    logging: {},
  };
  if (hasResources(spec)) {
    capabilities.resources = { subscribe: true, listChanged: true };
  }
  if (hasPrompts(spec)) {
    capabilities.prompts = { listChanged: true };
  }
  if ((spec.prompts?.length ?? 0) + (spec.resourceTemplates?.length ?? 0) > 0) {
    capabilities.completions = {};
  }
  if (runsTasks(spec)) {
    capabilities.tasks = {
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    };
  }
  return capabilities;
}

export function hasResources(spec: AnyServerSpec): boolean {
  return (spec.resources?.length ?? 0) +
          (spec.resourceTemplates?.length ?? 0) > 0 ||
    spec.dynamicLists?.resources === true;
}

export function hasPrompts(spec: AnyServerSpec): boolean {
  return (spec.prompts?.length ?? 0) > 0 ||
    spec.dynamicLists?.prompts === true;
}
