// Tools an agent has besides the gateway's MCP tools: delegation inside a
// team, messaging other agents over A2A. The runtime offers them to the
// model next to the gateway tools, under a `<group>__<tool>` name of its own.

import type { ModelTool } from "./model.ts";

export interface LocalToolContext {
  /** The calling agent's name (its identity). */
  agent: string;
  signal: AbortSignal;
}

export interface LocalTool {
  /** The name the model sees, e.g. `a2a__send_message`; never clashes with a gateway name. */
  tool: ModelTool;
  /** The text the model gets back; throw an Error to report a failure to the model. */
  call(
    args: Record<string, unknown>,
    context: LocalToolContext,
  ): Promise<string>;
}
