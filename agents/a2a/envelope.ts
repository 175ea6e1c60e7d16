// agentd's A2A message envelope (POST /v1/a2a/message): validated, recorded in the store (with
// an id and timestamps) and delivered. A `request` runs the receiving
// agent's turn and is answered by a `response` envelope; `notification`,
// `response` and `error` envelopes land in the receiver's inbox. A remote
// receiver (an http(s) address) gets the envelope over A2A, its fields in
// the message metadata under "agentd.envelope".

import { z } from "zod";
import { messageOf } from "../../platform/errors.ts";
import {
  Forbidden,
  Invalid,
  NotFound,
  Unavailable,
  UpstreamFailed,
} from "../errors.ts";
import type { Caller } from "../../platform/identity.ts";
import type { Logger } from "../../platform/log.ts";
import { type JsonValue, StoreError } from "../../platform/store/mod.ts";
import { ProviderError } from "../model.ts";
import {
  isRemoteAddress,
  RemoteAgentError,
  RemoteAgentForbidden,
  type RemoteAgents,
} from "./client.ts";
import type { A2AAgent, A2AHost } from "./host.ts";
import { sequence } from "./tasks.ts";
import { ENVELOPE_METADATA_KEY } from "./wire.ts";
import { describeIssues } from "../../platform/validation.ts";

export const ENVELOPE_TYPES = [
  "request",
  "response",
  "notification",
  "error",
] as const;
/** Priorities, lowest first; `normal` when not given. Recorded and shown, not used for ordering. */
export const PRIORITIES = ["low", "normal", "high"] as const;
export const MAX_CONTENT_CHARS = 512 * 1024;

export const envelopeSchema = z.strictObject({
  version: z.string().regex(
    /^\d+\.\d+\.\d+$/,
    "must be a dotted three-part version such as 1.0.0",
  ),
  type: z.enum(ENVELOPE_TYPES),
  from_agent: z.string().trim().min(1).max(512),
  /** A local agent's name or id, or the http(s) address of a remote agent. */
  to_agent: z.string().trim().min(1).max(2048),
  content: z.string().min(1).max(MAX_CONTENT_CHARS),
  priority: z.enum(PRIORITIES).default("normal"),
  /** The id of the envelope this one answers (optional). */
  in_reply_to: z.string().min(1).max(200).optional(),
});
export type EnvelopeInput = z.input<typeof envelopeSchema>;
export type Envelope = z.output<typeof envelopeSchema>;

export const ENVELOPE_STATUSES = [
  "accepted",
  "working",
  "answered",
  "failed",
  "delivered",
] as const;

/** A recorded envelope as the store keeps it and the API answers it. */
export const envelopeRecordSchema = z.object({
  id: z.string(),
  version: z.string().describe("Dotted three-part version"),
  type: z.enum(ENVELOPE_TYPES),
  from_agent: z.string(),
  to_agent: z.string(),
  content: z.string(),
  priority: z.enum(PRIORITIES),
  in_reply_to: z.string().nullable(),
  status: z.enum(ENVELOPE_STATUSES).describe(
    "accepted: in the receiver's inbox; working: a request being answered; " +
      "answered/failed: its outcome; delivered: handed to a remote agent",
  ),
  error: z.string().nullable(),
  reply_id: z.string().nullable().describe(
    "The response (or error) envelope that answered this request",
  ),
  task_id: z.string().nullable().describe(
    "The A2A task that carried it, when it came or went over A2A",
  ),
  created_at: z.string(),
  updated_at: z.string(),
});
export type EnvelopeRecord = z.infer<typeof envelopeRecordSchema>;

/** A request's answer, or the receipt of a one-way envelope (notification, response, error). */
export type PostResult =
  | { answered: EnvelopeRecord }
  | { accepted: { id: string; status: "accepted" } };

export interface InboxPage {
  data: EnvelopeRecord[];
  next_cursor: string | null;
}

/** The envelope fields an A2A message may carry in its metadata. */
const metadataEnvelope = z.object({
  version: envelopeSchema.shape.version,
  type: envelopeSchema.shape.type,
  from_agent: envelopeSchema.shape.from_agent,
  priority: envelopeSchema.shape.priority,
  in_reply_to: envelopeSchema.shape.in_reply_to,
});
export type MetadataEnvelope = z.output<typeof metadataEnvelope>;

export function readEnvelopeMetadata(
  metadata: Record<string, JsonValue>,
): MetadataEnvelope | undefined {
  const value = metadata[ENVELOPE_METADATA_KEY];
  if (value === undefined) return undefined;
  const parsed = metadataEnvelope.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

export interface EnvelopesOptions {
  host: A2AHost;
  remote: RemoteAgents;
  log: Logger;
}
/**
 * The one sender rule for every way an envelope comes in (POST
 * /v1/a2a/message, the metadata of an A2A JSON-RPC message): a caller bound
 * to an agent sends as that agent only, so no one forges another's name.
 */
export function assertSender(caller: Caller | undefined, from: string): void {
  const bound = caller?.agent;
  if (bound !== undefined && from !== bound) {
    throw new Forbidden(
      `This token belongs to agent "${bound}": from_agent must be "${bound}"`,
    );
  }
}

export class Envelopes {
  #host: A2AHost;
  #remote: RemoteAgents;
  #log: Logger;

  constructor(options: EnvelopesOptions) {
    this.#host = options.host;
    this.#remote = options.remote;
    this.#log = options.log;
  }

  /** Validates, records and delivers `body`; throws an AgentError (nothing recorded) for bad input or an unknown receiver. */
  async post(
    body: unknown,
    options: { caller?: Caller; signal?: AbortSignal } = {},
  ): Promise<PostResult> {
    const parsed = envelopeSchema.safeParse(body);
    if (!parsed.success) {
      throw new Invalid(
        `Invalid A2A message: ${describeIssues(parsed.error)}`,
        parsed.error.issues.map((i) => ({
          path: i.path.map(String).join("."),
          message: i.message,
        })),
      );
    }
    const envelope = parsed.data;
    assertSender(options.caller, envelope.from_agent);
    if (isRemoteAddress(envelope.to_agent)) {
      return await this.#postRemote(envelope, options.signal);
    }
    const agent = await this.#host.findAgent(envelope.to_agent);
    if (!agent) {
      throw new NotFound(
        `No agent "${envelope.to_agent}" here: to_agent must be a local agent's name or id, or an http(s) address of a remote agent`,
      );
    }
    if (envelope.type !== "request") {
      const record = await this.#record(envelope, agent, {
        status: "accepted",
      });
      return { accepted: { id: record.id, status: "accepted" } };
    }
    return await this.#request(envelope, agent, options.signal);
  }

  /** Records an envelope that reached a local agent over A2A. */
  async receive(
    envelope: MetadataEnvelope & { content: string },
    agent: A2AAgent,
    extra: { task_id?: string } = {},
  ): Promise<EnvelopeRecord> {
    return await this.#record({ ...envelope, to_agent: agent.name }, agent, {
      status: envelope.type === "request" ? "working" : "accepted",
      task_id: extra.task_id ?? null,
    });
  }

  async get(id: string): Promise<EnvelopeRecord | undefined> {
    const entry = await this.#host.store.get(["message", id]);
    return entry ? envelopeRecordSchema.parse(entry.value) : undefined;
  }

  async update(
    id: string,
    patch: Partial<Pick<EnvelopeRecord, "status" | "error" | "reply_id">>,
  ): Promise<void> {
    const record = await this.get(id);
    if (!record) return;
    await this.#host.store.set(["message", id], {
      ...record,
      ...patch,
      updated_at: new Date().toISOString(),
    });
  }

  /**
   * Envelopes addressed to `agent`, newest first unless `order` is "asc". A
   * caller bound to an agent reads only that agent's inbox.
   */
  async inbox(
    agent: A2AAgent,
    page: { limit: number; cursor?: string; order: "asc" | "desc" },
    caller?: Caller,
  ): Promise<InboxPage> {
    const bound = caller?.agent;
    if (bound !== undefined && bound !== agent.name) {
      throw new Forbidden(
        `This token belongs to agent "${bound}"; it reads only that agent's messages`,
      );
    }
    let listed;
    try {
      listed = await this.#host.store.list(["inbox", agent.id], {
        limit: page.limit,
        cursor: page.cursor,
        reverse: page.order === "desc",
      });
    } catch (error) {
      if (error instanceof StoreError) {
        throw new Invalid(`Invalid cursor: ${error.message}`);
      }
      throw error;
    }
    const ids = listed.entries.flatMap((e) =>
      typeof e.value === "string" ? [e.value] : []
    );
    const entries = await this.#host.store.getMany(
      ids.map((id) => ["message", id]),
    );
    const data = entries.flatMap((e) =>
      e ? [envelopeRecordSchema.parse(e.value)] : []
    );
    return { data, next_cursor: listed.cursor };
  }

  async #request(
    envelope: Envelope,
    agent: A2AAgent,
    signal?: AbortSignal,
  ): Promise<PostResult> {
    const request = await this.#record(envelope, agent, { status: "working" });
    const sender = await this.#localAgent(envelope.from_agent);
    try {
      const output = await this.#host.runTurn(agent, {
        text: envelope.content,
        session_id: `envelope:${envelope.from_agent}`,
        from: envelope.from_agent,
      }, { signal });
      const response = await this.#record(
        reply(envelope, request.id, agent.name, "response", output.content),
        sender,
        { status: "accepted" },
      );
      await this.update(request.id, {
        status: "answered",
        reply_id: response.id,
      });
      return { answered: response };
    } catch (error) {
      const reason = signal?.aborted
        ? "the caller went away before the answer"
        : messageOf(error);
      const failure = await this.#record(
        reply(envelope, request.id, agent.name, "error", reason),
        sender,
        { status: "accepted" },
      );
      await this.update(request.id, {
        status: "failed",
        error: reason,
        reply_id: failure.id,
      });
      this.#log.warn("a2a_request_failed", {
        agent: agent.name,
        request_id: request.id,
        error: reason,
      });
      const down = error instanceof ProviderError &&
        error.kind !== "bad_gateway";
      throw new (down ? Unavailable : UpstreamFailed)(
        `Agent "${agent.name}" could not answer: ${reason}`,
        { request_id: request.id, error_id: failure.id },
      );
    }
  }

  /**
   * One conversation per sender on the remote agent, as local requests get
   * (`envelope:<from_agent>`), told apart from the remote's own agents of the
   * same name by this daemon's id, kept in the store.
   */
  async #remoteContext(from: string): Promise<string> {
    const key = ["daemon_id"];
    let id = (await this.#host.store.get(key))?.value;
    if (typeof id !== "string") {
      const fresh = crypto.randomUUID();
      const saved = await this.#host.store.commit({
        checks: [{ key, version: null }],
        mutations: [{ type: "set", key, value: fresh }],
      });
      id = saved.ok ? fresh : (await this.#host.store.get(key))?.value;
    }
    return `envelope:${from}@${String(id)}`;
  }

  async #postRemote(
    envelope: Envelope,
    signal?: AbortSignal,
  ): Promise<PostResult> {
    // Refused before anything is stored: the config does not allow it.
    try {
      this.#remote.assertAllowed(envelope.to_agent);
    } catch (error) {
      if (error instanceof RemoteAgentForbidden) {
        throw new Forbidden(error.message);
      }
      if (error instanceof RemoteAgentError) {
        throw new Invalid(error.message);
      }
      throw error;
    }
    const record = await this.#record(envelope, undefined, {
      status: "working",
    });
    const request = envelope.type === "request";
    try {
      const answer = await this.#remote.send(envelope.to_agent, {
        text: envelope.content,
        contextId: await this.#remoteContext(envelope.from_agent),
        metadata: {
          [ENVELOPE_METADATA_KEY]: {
            id: record.id,
            version: envelope.version,
            type: envelope.type,
            from_agent: envelope.from_agent,
            priority: envelope.priority,
            ...(envelope.in_reply_to
              ? { in_reply_to: envelope.in_reply_to }
              : {}),
          },
        },
        returnImmediately: !request,
      }, signal);
      if (!request) {
        await this.update(record.id, { status: "delivered" });
        return { accepted: { id: record.id, status: "accepted" } };
      }
      const sender = await this.#localAgent(envelope.from_agent);
      const response = await this.#record(
        reply(envelope, record.id, answer.agent, "response", answer.text),
        sender,
        { status: "accepted", task_id: answer.task_id ?? null },
      );
      await this.update(record.id, {
        status: "answered",
        reply_id: response.id,
      });
      return { answered: response };
    } catch (error) {
      const reason = error instanceof RemoteAgentError
        ? error.reason
        : messageOf(error);
      // As for a local request: the sender's inbox says what went wrong.
      const failure = await this.#record(
        reply(envelope, record.id, envelope.to_agent, "error", reason),
        await this.#localAgent(envelope.from_agent),
        { status: "accepted" },
      );
      await this.update(record.id, {
        status: "failed",
        error: reason,
        reply_id: failure.id,
      });
      this.#log.warn("a2a_request_failed", {
        to: envelope.to_agent,
        request_id: record.id,
        error: reason,
      });
      throw new UpstreamFailed(
        `Cannot deliver to ${envelope.to_agent}: ${reason}`,
        { id: record.id, request_id: record.id, error_id: failure.id },
      );
    }
  }

  async #localAgent(ref: string): Promise<A2AAgent | undefined> {
    return isRemoteAddress(ref) ? undefined : await this.#host.findAgent(ref);
  }

  /** Stores the envelope, and in `inbox` agent's inbox when given. */
  async #record(
    envelope: Envelope,
    inbox: A2AAgent | undefined,
    extra: Pick<EnvelopeRecord, "status"> & { task_id?: string | null },
  ): Promise<EnvelopeRecord> {
    const now = new Date().toISOString();
    const record: EnvelopeRecord = {
      id: crypto.randomUUID(),
      version: envelope.version,
      type: envelope.type,
      from_agent: envelope.from_agent,
      to_agent: envelope.to_agent,
      content: envelope.content,
      priority: envelope.priority,
      in_reply_to: envelope.in_reply_to ?? null,
      status: extra.status,
      error: null,
      reply_id: null,
      task_id: extra.task_id ?? null,
      created_at: now,
      updated_at: now,
    };
    const result = await this.#host.store.commit({
      mutations: [
        { type: "set", key: ["message", record.id], value: record },
        ...(inbox
          ? [{
            type: "set" as const,
            key: ["inbox", inbox.id, sequence(), record.id],
            value: record.id,
          }]
          : []),
      ],
    });
    if (!result.ok) throw new Error(`Cannot record A2A message ${record.id}`);
    return record;
  }
}

/** The answer to `request`: from and to swapped, same version and priority. */
function reply(
  request: Envelope,
  requestId: string,
  from: string,
  type: "response" | "error",
  content: string,
): Envelope {
  return {
    version: request.version,
    type,
    from_agent: from,
    to_agent: request.from_agent,
    content,
    priority: request.priority,
    in_reply_to: requestId,
  };
}
