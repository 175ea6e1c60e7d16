// Looking at untrusted values: is it a plain object, and what zod found
// wrong with it, in one readable line that names each field.

import type { z } from "zod";

/** A plain object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * `message.parts: Too small; id: Required`: each issue prefixed by its path.
 * An issue about the whole value is prefixed by `root` when given (`card`);
 * `max` keeps the first issues only (a bad 1000-item reply is one line).
 */
export function describeIssues(
  error: z.ZodError,
  options: { root?: string; max?: number } = {},
): string {
  const issues = error.issues.slice(0, options.max ?? error.issues.length);
  if (issues.length === 0) return "invalid shape";
  return issues.map((issue) => {
    const path = issue.path.map(String).join(".") || options.root;
    return path ? `${path}: ${issue.message}` : issue.message;
  }).join("; ");
}
