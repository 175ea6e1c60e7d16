// Agent cards. One agent has three views of one card:
// - the A2A v1.0 card (`a2aCard`), served at <agent>/.well-known/agent-card.json
//   to clients announcing `A2A-Version: 1.x`;
// - the 0.3 card with the v1.0 interfaces embedded (`legacyCard`), served
//   there to clients sending no version or 0.3 (as @a2a-js/sdk's server does);
// - agentd's card (`agentdCard`) at GET /v1/a2a/{agent_url}/card: the v1.0
//   card plus `protocols` and `endpoints`, where `capabilities` is an
//   array of names (the A2A capability flags that are on, then the skill ids)
//   instead of A2A's object — the only field the two disagree on.

import { z } from "zod";
import type { JsonValue } from "../../platform/store/mod.ts";
import { describeIssues } from "../../platform/validation.ts";
import { VERSION } from "../../platform/version.ts";
import type { A2AAgent } from "./host.ts";

type JsonObject = { [key: string]: JsonValue };

export const PROTOCOL_BINDING = "JSONRPC";
/** The protocol versions served at every agent's endpoint. */
export const PROTOCOL_VERSIONS = ["1.0", "0.3"] as const;

export interface CardOptions {
  /** The agent's JSON-RPC endpoint, `{base_url}/v1/a2a/<agent_name>`. */
  endpoint: string;
  /** The daemon's origin, `{base_url}`. */
  baseUrl: string;
}

/** The A2A v1.0 AgentCard of a local agent. */
export function a2aCard(agent: A2AAgent, options: CardOptions): JsonObject {
  const description = agent.description.trim() ||
    `agentd agent ${agent.name} (${agent.model})`;
  const skills: JsonObject[] = [{
    id: "conversation",
    name: "Conversation",
    description,
    tags: ["chat", "text"],
  }];
  const seen = new Set(["conversation"]);
  for (const tool of agent.tools) {
    if (seen.has(tool)) continue;
    seen.add(tool);
    const server = agent.toolServers?.[tool];
    skills.push({
      id: tool,
      name: tool,
      description: `Uses the tool ${tool}`,
      tags: server === undefined ? ["tool"] : ["tool", server],
    });
  }
  return {
    name: agent.name,
    description,
    supportedInterfaces: PROTOCOL_VERSIONS.map((protocolVersion) => ({
      url: options.endpoint,
      protocolBinding: PROTOCOL_BINDING,
      protocolVersion,
    })),
    provider: { organization: "agentd", url: options.baseUrl },
    version: VERSION,
    capabilities: {
      streaming: true,
      pushNotifications: false,
      extendedAgentCard: false,
    },
    defaultInputModes: ["text/plain", "application/json"],
    defaultOutputModes: ["text/plain"],
    skills,
  };
}

/** The 0.3 card (`url`, `preferredTransport`, `protocolVersion`) that still carries v1.0's `supportedInterfaces`. */
export function legacyCard(card: JsonObject, endpoint: string): JsonObject {
  const { capabilities, supportedInterfaces, ...rest } = card;
  const flags = z.object({
    streaming: z.boolean().optional(),
    pushNotifications: z.boolean().optional(),
  }).safeParse(capabilities);
  return {
    ...rest,
    url: endpoint,
    preferredTransport: PROTOCOL_BINDING,
    protocolVersion: "0.3.0",
    capabilities: flags.success ? flags.data : {},
    supportsAuthenticatedExtendedCard: false,
    supportedInterfaces: supportedInterfaces ?? [],
  };
}

const interfaceSchema = z.object({
  url: z.string().min(1),
  protocolBinding: z.string().optional(),
  protocol_binding: z.string().optional(),
  protocolVersion: z.string().optional(),
  protocol_version: z.string().optional(),
});

const flagsSchema = z.looseObject({
  streaming: z.boolean().optional(),
  pushNotifications: z.boolean().optional(),
  extendedAgentCard: z.boolean().optional(),
});

const remoteCardSchema = z.looseObject({
  name: z.string().min(1),
  description: z.string().optional(),
  version: z.string().optional(),
  supportedInterfaces: z.array(interfaceSchema).optional(),
  // 0.3
  url: z.string().optional(),
  preferredTransport: z.string().optional(),
  protocolVersion: z.string().optional(),
  additionalInterfaces: z.array(
    z.object({ url: z.string().min(1), transport: z.string().optional() }),
  ).optional(),
  capabilities: z.union([flagsSchema, z.array(z.string())]).optional(),
  skills: z.array(z.looseObject({ id: z.string() })).optional(),
});

export interface AgentInterface {
  url: string;
  protocolBinding: string;
  protocolVersion: string;
}

/** What agentd needs of any A2A card, v1.0 or 0.3. */
export interface CardSummary {
  name: string;
  interfaces: AgentInterface[];
  /** The JSON-RPC interface to talk to: v1.0 preferred. */
  endpoint: string;
  /** agentd's view of the card (GET /v1/a2a/{agent_url}/card). */
  agentd: JsonObject;
}

/** Reads an A2A card of either version; throws an Error saying what is missing. */
export function readCard(raw: unknown): CardSummary {
  const object = z.record(z.string(), z.json()).safeParse(raw);
  if (!object.success) {
    throw new Error("not an A2A agent card (not a JSON object)");
  }
  const parsed = remoteCardSchema.safeParse(object.data);
  if (!parsed.success) {
    throw new Error(
      `not an A2A agent card (${
        describeIssues(parsed.error, { root: "card" })
      })`,
    );
  }
  const card = parsed.data;
  const interfaces: AgentInterface[] = card.supportedInterfaces?.length
    ? card.supportedInterfaces.map((i) => ({
      url: i.url,
      protocolBinding: i.protocolBinding ?? i.protocol_binding ?? "JSONRPC",
      protocolVersion: i.protocolVersion ?? i.protocol_version ?? "1.0",
    }))
    : card.url
    ? [
      {
        url: card.url,
        protocolBinding: card.preferredTransport ?? "JSONRPC",
        protocolVersion: card.protocolVersion ?? "0.3",
      },
      ...(card.additionalInterfaces ?? []).map((i) => ({
        url: i.url,
        protocolBinding: i.transport ?? "JSONRPC",
        protocolVersion: card.protocolVersion ?? "0.3",
      })),
    ]
    : [];
  const jsonRpc = interfaces.filter((i) =>
    i.protocolBinding.toUpperCase() === PROTOCOL_BINDING
  );
  const preferred = jsonRpc.find((i) => i.protocolVersion.startsWith("1.")) ??
    jsonRpc[0] ?? interfaces[0];
  if (!preferred) {
    throw new Error(
      "the agent card names no interface (supportedInterfaces or url)",
    );
  }
  const names = Array.isArray(card.capabilities)
    ? card.capabilities
    : capabilityNames(card.capabilities ?? {}, card.skills ?? []);
  const agentd: JsonObject = {
    ...object.data,
    name: card.name,
    version: threePart(card.version ?? "0.0.0"),
    capabilities: names,
    protocols: ["a2a"],
    endpoints: { a2a: preferred.url },
    supportedInterfaces: interfaces.map((i) => ({ ...i })),
  };
  return { name: card.name, interfaces, endpoint: preferred.url, agentd };
}

/** agentd's card of a local agent: its v1.0 card with `protocols`, `endpoints` and listed capabilities. */
export function agentdCard(card: JsonObject): JsonObject {
  return readCard(card).agentd;
}

/** The A2A flags that are on (`streaming`, `push_notifications`, `extended_agent_card`), then the skill ids. */
export function capabilityNames(
  flags: z.infer<typeof flagsSchema>,
  skills: readonly { id: string }[],
): string[] {
  const names: string[] = [];
  if (flags.streaming) names.push("streaming");
  if (flags.pushNotifications) names.push("push_notifications");
  if (flags.extendedAgentCard) names.push("extended_agent_card");
  for (const skill of skills) {
    if (!names.includes(skill.id)) names.push(skill.id);
  }
  return names;
}

/** `1` → `1.0.0`, `1.2` → `1.2.0`; other shapes stay as they are. */
export function threePart(version: string): string {
  const match = /^(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(version.trim());
  if (!match) return version;
  return `${match[1]}.${match[2] ?? "0"}.${match[3] ?? "0"}`;
}
