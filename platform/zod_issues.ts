// Zod validation problems as one line a person (or a model) can act on.

import type { z } from "zod";

/** `key: message; other: message`, naming each offending field (the first `limit` only, when given). */
export function describeIssues(error: z.ZodError, limit?: number): string {
  const issues = limit === undefined
    ? error.issues
    : error.issues.slice(0, limit);
  if (issues.length === 0) return "invalid shape";
  return issues.map((issue) => {
    const path = issue.path.map(String).join(".");
    return path ? `${path}: ${issue.message}` : issue.message;
  }).join("; ");
}
