// `a2a__send_message`: lets an agent message another agent, local (by
// name) or remote (by http(s) address), through the same envelope path as
// POST /v1/a2a/message, with the calling agent as `from_agent`.

import { z } from "zod";
import type { LocalTool } from "../local_tool.ts";
import { MAX_CONTENT_CHARS } from "./envelope.ts";
import type { A2AService } from "./mod.ts";
import { describeIssues } from "../../platform/validation.ts";

/** The envelope version the tool writes. */
export const TOOL_ENVELOPE_VERSION = "1.0.0";

const argsSchema = z.strictObject({
  to: z.string().trim().min(1).max(2048),
  message: z.string().min(1).max(MAX_CONTENT_CHARS),
  type: z.enum(["request", "notification"]).default("request"),
});

export function a2aMessagingTool(service: A2AService): LocalTool {
  return {
    tool: {
      name: "a2a__send_message",
      origin: { server: "a2a", tool: "send_message" },
      description:
        "Send a message to another agent. type=request (default) waits for the agent's answer and returns it; " +
        "type=notification only delivers the message to its inbox and returns at once.",
      parameters: {
        type: "object",
        properties: {
          to: {
            type: "string",
            description:
              "The receiving agent: a local agent's name, or the http(s) address of a remote A2A agent (its endpoint or card URL)",
          },
          message: { type: "string", description: "The text to send" },
          type: {
            type: "string",
            enum: ["request", "notification"],
            default: "request",
            description: "request: wait for an answer; notification: one-way",
          },
        },
        required: ["to", "message"],
        additionalProperties: false,
      },
    },
    async call(args, context) {
      const parsed = argsSchema.safeParse(args);
      if (!parsed.success) {
        throw new Error(`Invalid arguments: ${describeIssues(parsed.error)}`);
      }
      const { to, message, type } = parsed.data;
      // By name in any case, or by id: the receiver as the host finds it.
      const receiver = type === "request"
        ? await service.host.findAgent(to)
        : undefined;
      if (type === "request" && receiver?.name === context.agent) {
        throw new Error(
          "An agent cannot send a request to itself; answer it directly",
        );
      }
      const result = await service.envelopes.post({
        version: TOOL_ENVELOPE_VERSION,
        type,
        from_agent: context.agent,
        to_agent: to,
        content: message,
      }, { caller: { agent: context.agent }, signal: context.signal });
      if ("accepted" in result) {
        return `Notification ${result.accepted.id} delivered to ${to}.`;
      }
      return result.answered.content;
    },
  };
}
