// Tool-call policy: allow, ask or deny by server, tool, argument patterns and
// caller identity. Pure evaluation here; tools/kit/policy/guard.ts applies it to
// every call and asks a person when the answer is `ask`.

import { z } from "zod";
import type { Caller } from "./identity.ts";
import {
  type ArgKind,
  judgedArg,
  judgedPattern,
  type OsName,
} from "./canonical.ts";

/**
 * What a tool touches beyond its own server's data, declared on each tool
 * (`touches` on its definition). Agents are asked before each by default
 * (`safe-default:<capability>`); local callers only under `strict`.
 */
export const CAPABILITIES = {
  /** Runs script in a web page or an extension (execute_js, content scripts, extension actions, raw CDP). */
  "page-script": "runs script in web pages or extensions",
  /** Reads or writes cookies, web storage or extension storage: sessions and logins. */
  "cookies-storage": "reads or writes cookies, web or extension storage",
  /** Observes the browser's network requests across tabs (their URLs can carry tokens). */
  "network-log": "observes the browser's network requests",
  /** Reads, replaces or drops stored platform credentials, or the endpoints they are sent to. */
  "credentials": "reads or changes stored platform credentials",
  /** Adds or removes gateway upstreams: servers every agent then reaches, and whose tool descriptions it reads. */
  "upstreams": "adds or removes gateway upstreams",
  /** Sends mouse, keyboard or clipboard input to the desktop. */
  "desktop-input": "sends input to the desktop",
  /** Writes a file; unasked inside `write_roots`. */
  "files-write": "writes files",
} as const;
export type Capability = keyof typeof CAPABILITIES;
const CapabilitySchema = z.enum(
  Object.keys(CAPABILITIES) as [Capability, ...Capability[]],
);

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
  /**
   * Capabilities the tool touches (see CAPABILITIES). An `allow` rule
   * matches a tool only when every capability it touches is named (allowing
   * cookies never allows page scripts); `ask` and `deny` match a tool that
   * touches any of them.
   */
  capability: z.union([CapabilitySchema, z.array(CapabilitySchema).min(1)])
    .optional(),
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
  /** What the tool touches (its definition's `touches`); none for external upstreams' tools. */
  touches?: readonly Capability[];
  /** Its path and URL arguments, whose (canonical) values and rule globs are compared as the OS reads them. */
  argKinds?: Readonly<Record<string, ArgKind>>;
  /**
   * Every argument the tool takes (its input schema's names): a `deny` or
   * `ask` rule on one of them also matches a call that leaves it out or
   * gives it in a form no glob reads (an omitted `domain` is "the current
   * tab's", which the rule cannot see).
   */
  argNames?: readonly string[];
}

export interface EvaluateOptions {
  /** Whose path rules apply (case folding on darwin and windows); this process's OS by default. */
  os?: OsName;
}

export interface Verdict {
  decision: Decision;
  /** The rule that decided: a rule id, `rules[3]`, `default`, or `safe-default:<why>`. */
  rule: string;
}

/** First matching rule wins; then the safe defaults; then the caller's default. */
export function evaluate(
  policy: PolicyConfig,
  facts: ToolFacts,
  options: EvaluateOptions = {},
): Verdict {
  const os = options.os ?? Deno.build.os;
  for (const [index, rule] of policy.rules.entries()) {
    if (matches(rule, facts, os)) {
      return { decision: rule.decision, rule: rule.id ?? `rules[${index}]` };
    }
  }
  const agent = facts.caller.agent !== undefined;
  if (agent || policy.strict) {
    const safe = safeDefault(policy, facts, os);
    if (safe) return { decision: "ask", rule: `safe-default:${safe}` };
  }
  return agent
    ? { decision: policy.agent_default, rule: "agent_default" }
    : { decision: policy.default, rule: "default" };
}

/** The capability the safe defaults ask about for this call, if any. */
function safeDefault(
  policy: PolicyConfig,
  facts: ToolFacts,
  os: OsName,
): Capability | undefined {
  for (const capability of facts.touches ?? []) {
    if (capability === "files-write" && insideWriteRoots(policy, facts, os)) {
      continue;
    }
    return capability;
  }
  return undefined;
}

/**
 * Whether every path the call writes lies inside a write root. A call
 * without a path argument writes no file (a screenshot without `path`).
 */
function insideWriteRoots(
  policy: PolicyConfig,
  facts: ToolFacts,
  os: OsName,
): boolean {
  const named = Object.entries(facts.argKinds ?? {})
    .filter(([, kind]) => kind === "path");
  // A tool that writes files but names no path argument cannot be checked: ask.
  if (named.length === 0) return false;
  const paths = named.map(([name]) => facts.args[name])
    .filter((value) => value !== undefined);
  return paths.every((path) =>
    typeof path === "string" &&
    policy.write_roots.some((root) =>
      globMatch(
        judgedPattern(root, "path", os).replace(/\/+$/, "") + "/**",
        judgedArg(path, "path", os),
      )
    )
  );
}

function matches(rule: PolicyRule, facts: ToolFacts, os: OsName): boolean {
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
  if (rule.capability !== undefined) {
    const named: readonly Capability[] = typeof rule.capability === "string"
      ? [rule.capability]
      : rule.capability;
    const touched = facts.touches ?? [];
    const covered = rule.decision === "allow"
      ? touched.length > 0 && touched.every((c) => named.includes(c))
      : touched.some((c) => named.includes(c));
    if (!covered) return false;
  }
  for (const [name, wanted] of Object.entries(rule.args ?? {})) {
    const value = facts.args[name];
    if (typeof value !== "string" && typeof value !== "number") {
      // Fails closed: a refusal the caller could dodge by leaving the
      // argument out (or nesting it) would be no refusal.
      if (rule.decision !== "allow" && facts.argNames?.includes(name)) continue;
      return false;
    }
    const patterns = typeof wanted === "string" ? [wanted] : wanted;
    const kind = facts.argKinds?.[name];
    const judged = kind !== undefined && typeof value === "string"
      ? judgedArg(value, kind, os)
      : String(value);
    if (
      !patterns.some((pattern) =>
        globMatch(
          kind === undefined ? pattern : judgedPattern(pattern, kind, os),
          judged,
        )
      )
    ) {
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
