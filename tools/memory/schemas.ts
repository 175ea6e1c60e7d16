// Argument schemas shared by the memory tools, and how entries are shown.

import { z } from "zod";
import type { JsonValue } from "../../platform/store/mod.ts";
import type { MemoryEntry, Message } from "./model.ts";

/** Largest value accepted (UTF-8 bytes); HTTP bodies are capped at 1 MiB anyway. */
export const MAX_VALUE_BYTES = 1024 * 1024;

export const namespace = z.string().min(1).max(200)
  .regex(/^[^\p{Cc}]+$/u, "must not contain control characters")
  .describe("Namespace; an agent's own namespace is its name");
export const key = z.string().min(1).max(512)
  .regex(/^[^\p{Cc}]+$/u, "must not contain control characters")
  .describe("Key within the namespace");
export const value = z.string()
  .refine((text) => utf8Fits(text, MAX_VALUE_BYTES), {
    message: `must be at most ${MAX_VALUE_BYTES} bytes (UTF-8)`,
  })
  .describe("Text to store");
const utf8 = new TextEncoder();

/** Whether `text` is at most `bytes` in UTF-8; short texts need no encoding (≤ 3 bytes per UTF-16 unit). */
function utf8Fits(text: string, bytes: number): boolean {
  return text.length * 3 <= bytes || utf8.encode(text).length <= bytes;
}

export const tags = z.array(z.string().min(1).max(64)).max(32)
  .describe(
    'Labels for filtering; the tag "sensitive" encrypts the value at rest',
  );
export const query = z.string().min(1).max(2000).describe(
  "What to look for, in words",
);
export const sessionId = z.string().min(1).max(200).describe("Conversation id");

/** An entry as JSON, with the value cut to `maxValue` characters when given. */
export function entryJson(
  entry: MemoryEntry,
  maxValue?: number,
): { [key: string]: JsonValue } {
  const out: { [key: string]: JsonValue } = {
    namespace: entry.namespace,
    key: entry.key,
    value: entry.value,
    tags: entry.tags,
    sensitive: entry.sensitive,
    created_at: entry.created_at,
    updated_at: entry.updated_at,
  };
  if (maxValue !== undefined) {
    Object.assign(out, cutValue(entry.value, maxValue));
  }
  return out;
}

/** `value` cut to `max` characters, with a note saying how much is left out. */
export function cutValue(
  value: string,
  max: number,
): { value: string; value_truncated?: string } {
  if (value.length <= max) return { value };
  return {
    value: value.slice(0, max),
    value_truncated: `${
      value.length - max
    } more characters; use retrieve_memory for the whole value`,
  };
}

/** An entry's metadata without its value, for write acknowledgements. */
export function entryMeta(entry: MemoryEntry): { [key: string]: JsonValue } {
  return {
    namespace: entry.namespace,
    key: entry.key,
    tags: entry.tags,
    sensitive: entry.sensitive,
    value_length: entry.value.length,
    created_at: entry.created_at,
    updated_at: entry.updated_at,
  };
}

export function messageJson(message: Message): { [key: string]: JsonValue } {
  const out: { [key: string]: JsonValue } = {
    role: message.role,
    content: message.content,
    at: message.at,
  };
  if (message.extra) out.extra = toJson(message.extra);
  return out;
}

/** Structured values that came in as JSON go back out as JSON. */
function toJson(value: unknown): JsonValue {
  if (
    value === null || typeof value === "string" || typeof value === "boolean"
  ) return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (Array.isArray(value)) return value.map(toJson);
  if (typeof value === "object") {
    const out: { [key: string]: JsonValue } = {};
    for (const [k, v] of Object.entries(value)) out[k] = toJson(v);
    return out;
  }
  return null;
}

// What the tools answer (their `output` schemas).

/** entryMeta's shape. */
export const EntryMetaOut = z.object({
  namespace: z.string(),
  key: z.string(),
  tags: z.array(z.string()),
  sensitive: z.boolean(),
  value_length: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});

/** entryJson's shape (`value_truncated` when the value was cut). */
export const EntryOut = z.object({
  namespace: z.string(),
  key: z.string(),
  value: z.string(),
  value_truncated: z.string().optional(),
  tags: z.array(z.string()),
  sensitive: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});

/** messageJson's shape. */
export const MessageOut = z.object({
  role: z.string(),
  content: z.string(),
  at: z.string(),
  extra: z.record(z.string(), z.unknown()).optional(),
});
