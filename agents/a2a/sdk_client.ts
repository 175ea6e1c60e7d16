// The @a2a-js/sdk client's side of agents/a2a/client.ts: one message to a
// remote agent, the transport (JSON-RPC or HTTP+JSON) and protocol version
// (1.0, or 0.3 through its compat layer) picked from the card's interfaces.
// client.ts loads this file on the first message (platform/lazy.ts): the SDK
// is about 1 MiB that a daemon calling no remote agent never needs.

import { AgentCard, Message, SendMessageRequest, Task } from "@a2a-js/sdk";
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from "@a2a-js/sdk/client";
import type { JsonValue } from "../../platform/store/mod.ts";
import type { AgentInterface } from "./card.ts";

export interface Delivery {
  fetchImpl: typeof fetch;
  /** The agent's name and interfaces, from its card. */
  name: string;
  interfaces: AgentInterface[];
  text: string;
  metadata?: Record<string, JsonValue>;
  contextId?: string;
  returnImmediately?: boolean;
  signal?: AbortSignal;
}

/** The answer in its JSON form: a message, or a task. */
export type Answer = { message: unknown } | { task: unknown };

/** Sends one text message; resolves with the answer (SDK errors reject as they are). */
export async function deliver(delivery: Delivery): Promise<Answer> {
  const transport = {
    fetchImpl: delivery.fetchImpl,
    legacyCompat: { enabled: true },
  };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [
        new JsonRpcTransportFactory(transport),
        new RestTransportFactory(transport),
      ],
    }),
  );
  // The SDK picks transport and version from the interfaces alone.
  const client = await factory.createFromAgentCard(
    AgentCard.fromJSON({
      name: delivery.name,
      supportedInterfaces: delivery.interfaces,
      capabilities: {},
    }),
  );
  const result = await client.sendMessage(
    SendMessageRequest.fromJSON({
      message: {
        messageId: crypto.randomUUID(),
        role: "ROLE_USER",
        parts: [{ text: delivery.text }],
        metadata: delivery.metadata,
        ...(delivery.contextId ? { contextId: delivery.contextId } : {}),
      },
      configuration: {
        acceptedOutputModes: ["text/plain", "application/json"],
        returnImmediately: delivery.returnImmediately ?? false,
      },
    }),
    { signal: delivery.signal },
  );
  return "messageId" in result
    ? { message: Message.toJSON(result) }
    : { task: Task.toJSON(result) };
}
