// Tool-call policy: allow, ask or deny by server, tool, argument patterns and
// caller identity. Pure evaluation here; tools/kit/guard.ts applies it to
// every call and asks a person when the answer is `ask`.

import { z } from "zod";
import type { Caller } from "./identity.ts";

export type Decision = "allow" | "ask" | "deny";
const DecisionSchema = z.enum(["allow", "ask", "deny"]);

const Pattern = z.string().min(1).max(1024);

export const PolicyRule = z.object({
  /** Named in denials and in the audit; `rules[<index>]` when absent. */
  id: z.string().min(1).max(64).optional(),
  /** Server id glob (`desktop-control`, `*`). */
  server: Pattern.optional(),
  /** Tool name glob (`mouse_*`). */
  tool: Pattern.optional(),
  /** `local`: unbound callers (daemon token, loopback, stdio); `agent`: any agent identity. */
  caller: z.enum(["local", "agent"]).optional(),
  /** Agent name glob; implies an agent caller. */
  agent: Pattern.optional(),
  /** Argument name -> globs; the rule matches when each named argument matches one of its globs. */
  args: z.record(z.string(), z.union([Pattern, z.array(Pattern).min(1)]))
    .optional(),
  decision: DecisionSchema,
}).strict();
export type PolicyRule = z.output<typeof PolicyRule>;

export const PolicyConfig = z.object({
  rules: z.array(PolicyRule).default([]),
  /** When no rule matches an unbound (local operator) caller. */
  default: DecisionSchema.default("allow"),
  /** When no rule matches an agent caller (before the safe defaults). */
  agent_default: DecisionSchema.default("allow"),
  /** Apply the safe defaults (ask on destructive input, writes, scripts, tokens) to local callers too. */
  strict: z.boolean().default(false),
  /** Directories (globs) where file writes need no approval under the safe defaults. */
  write_roots: z.array(Pattern).default([]),
  /** How long a pending approval waits before it counts as denied. */
  ask_timeout_ms: z.number().int().min(1).max(86_400_000).default(120_000),
  /** Audit records older than this are dropped. */
  audit_retention_days: z.number().int().min(1).max(3650).default(30),
}).strict();
export type PolicyConfig = z.output<typeof PolicyConfig>;

export interface ToolFacts {
  server: string;
  /** The replica group `server` serves in, when it has another name: a rule's `server` matches either. */
  group?: string;
  tool: string;
  args: Record<string, unknown>;
  caller: Caller;
  annotations?: {
    destructiveHint?: boolean;
    readOnlyHint?: boolean;
    openWorldHint?: boolean;
  };
}

export interface Verdict {
  decision: Decision;
  /** The rule that decided: a rule id, `rules[3]`, `default`, or `safe-default:<why>`. */
  rule: string;
}

/** First matching rule wins; then the safe defaults; then the caller's default. */
export function evaluate(policy: PolicyConfig, facts: ToolFacts): Verdict {
  for (const [index, rule] of policy.rules.entries()) {
    if (matches(rule, facts)) {
      return { decision: rule.decision, rule: rule.id ?? `rules[${index}]` };
    }
  }
  const agent = facts.caller.agent !== undefined;
  if (agent || policy.strict) {
    const safe = safeDefault(policy, facts);
    if (safe) return { decision: "ask", rule: `safe-default:${safe}` };
  }
  return agent
    ? { decision: policy.agent_default, rule: "agent_default" }
    : { decision: policy.default, rule: "default" };
}

/** Why the safe defaults ask for this call, if they do. */
function safeDefault(
  policy: PolicyConfig,
  facts: ToolFacts,
): string | undefined {
  const { server, tool, args, caller } = facts;
  if (tool === "get_token" && caller.agent !== undefined) return "token-read";
  if (tool === "execute_js") return "page-script";
  if (server === "desktop-control" && facts.annotations?.destructiveHint) {
    if (tool === "file_write") {
      const path = args.path;
      const inRoot = typeof path === "string" &&
        policy.write_roots.some((root) =>
          globMatch(root.replace(/\/+$/, "") + "/**", path)
        );
      return inRoot ? undefined : "file-write";
    }
    return "desktop-input";
  }
  return undefined;
}

function matches(rule: PolicyRule, facts: ToolFacts): boolean {
  if (
    rule.server !== undefined && !globMatch(rule.server, facts.server) &&
    (facts.group === undefined || !globMatch(rule.server, facts.group))
  ) {
    return false;
  }
  if (rule.tool !== undefined && !globMatch(rule.tool, facts.tool)) {
    return false;
  }
  const agent = facts.caller.agent;
  if (rule.caller === "local" && agent !== undefined) return false;
  if (rule.caller === "agent" && agent === undefined) return false;
  if (
    rule.agent !== undefined &&
    (agent === undefined || !globMatch(rule.agent, agent))
  ) return false;
  for (const [name, wanted] of Object.entries(rule.args ?? {})) {
    const value = facts.args[name];
    if (typeof value !== "string" && typeof value !== "number") return false;
    const patterns = typeof wanted === "string" ? [wanted] : wanted;
    if (!patterns.some((pattern) => globMatch(pattern, String(value)))) {
      return false;
    }
  }
  return true;
}

const compiled = new Map<string, RegExp>();

/** `*` matches within a path segment, `**` across `/`, `?` one character; the whole value must match. */
export function globMatch(pattern: string, value: string): boolean {
  let regex = compiled.get(pattern);
  if (!regex) {
    let source = "";
    for (let i = 0; i < pattern.length; i++) {
      const char = pattern[i];
      if (char === "*" && pattern[i + 1] === "*") {
        source += ".*";
        i++;
      } else if (char === "*") source += "[^/]*";
      else if (char === "?") source += "[^/]";
      else source += char.replace(/[.+^${}()|[\]\\]/g, "\\$&");
    }
    regex = new RegExp(`^${source}$`, "s");
    compiled.set(pattern, regex);
  }
  return regex.test(value);
}
