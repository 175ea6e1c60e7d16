// The policy guard every tool call passes (tools/kit/transport/sdk_server.ts): it evaluates
// the operator's policy, asks a person when the answer is `ask`, and writes
// the one audit record of the call. A person, never the caller being judged:
// a local caller's own client is asked by MCP elicitation when it can; an
// agent-bound caller's never is (its client could answer for itself). Its
// question, and any the local client cannot take, waits as a pending
// approval the operator answers over HTTP, `agentd approve|deny`, the
// dashboard, or the MCP client of a connected operator session that can
// elicit. No answer in time denies.

import { AsyncLocalStorage } from "node:async_hooks";
import type {
  CallToolResult,
  ElicitRequestFormParams,
  ElicitResult,
} from "../../../platform/mcp_sdk.ts";
import type { Logger } from "../../../platform/log.ts";
import {
  evaluate,
  PolicyConfig,
  type ToolFacts,
} from "../../../platform/policy.ts";
import { realPattern } from "../../../platform/canonical.ts";
import type { JsonValue, Store } from "../../../platform/store/mod.ts";
import { AUDIT_DELAY_MS, AuditTrail, redactArgs } from "./audit.ts";
import { type CallContext, ToolError } from "../mod.ts";
import { messageOf } from "../../../platform/errors.ts";

/** The outermost call of a chain (a gateway call forwarded in-process): who a person is asked through. */
export const outerCall = new AsyncLocalStorage<CallContext>();

export type Scope = "once" | "session";

export interface Approval {
  [key: string]: JsonValue;
  id: string;
  created: string;
  expires: string;
  caller: string;
  session: string | null;
  server: string;
  tool: string;
  /** The arguments that will run, redacted of sensitive values. */
  args: { [key: string]: JsonValue };
  rule: string;
  status: "pending" | "approved" | "denied" | "timeout";
  decided_by: string | null;
  scope: Scope | null;
}

interface Waiting {
  approval: Approval;
  /** What exactly will run, arguments unredacted: shown to the operator, never stored. */
  runs: string;
  settle(answer: { approved: boolean; by: string; scope: Scope }): void;
}

/** A connected operator (unbound) MCP session whose client can elicit: it is asked about pending approvals. */
export interface OperatorClient {
  elicit(
    params: ElicitRequestFormParams,
    options: { signal: AbortSignal; timeout: number },
  ): Promise<ElicitResult>;
}

export interface Admission {
  allowed: boolean;
  decision: string;
  rule: string;
  decided_by: string | null;
  /** Set when refused: the isError text naming the rule. */
  message?: string;
}

export class Guard {
  #policy: PolicyConfig;
  /** The policy as judged: path globs also in their real spelling (see withRealPatterns). */
  #judged: Promise<PolicyConfig>;
  readonly audit: AuditTrail;
  readonly #waiting = new Map<string, Waiting>();
  /** `<session>|<caller>|<server>.<tool>` granted for the rest of a session. */
  readonly #grants = new Set<string>();
  /** Settled approvals, newest last (the store keeps them too). */
  readonly #recent: Approval[] = [];
  /** Operator sessions that can elicit, asked about each pending approval. */
  readonly #operators = new Set<OperatorClient>();

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    policy: PolicyConfig,
    private readonly clock: () => number = Date.now,
  ) {
    this.#policy = policy;
    this.#judged = withRealPatterns(policy);
    this.audit = new AuditTrail(
      store,
      () => this.#policy.audit_retention_days,
      clock,
      AUDIT_DELAY_MS,
      (error) =>
        this.log.warn("audit_prune_failed", { error: messageOf(error) }),
    );
  }

  get policy(): PolicyConfig {
    return this.#policy;
  }

  /** Replaces the policy (operator only); throws a readable error on a bad one. */
  setPolicy(input: unknown): PolicyConfig {
    const parsed = PolicyConfig.safeParse(input);
    if (!parsed.success) {
      throw new ToolError(
        `Invalid policy: ${
          parsed.error.issues.map((issue) =>
            `${issue.path.join(".") || "policy"}: ${issue.message}`
          ).join("; ")
        }`,
      );
    }
    this.#policy = parsed.data;
    this.#judged = withRealPatterns(parsed.data);
    this.log.info("policy_changed", { rules: parsed.data.rules.length });
    return parsed.data;
  }

  /**
   * Registers an operator's MCP session (unbound caller, client with
   * elicitation) to be asked about pending approvals; returns its
   * unregistration, called when the session closes.
   */
  addOperatorClient(client: OperatorClient): () => void {
    this.#operators.add(client);
    return () => this.#operators.delete(client);
  }

  /** Decides whether the call may run, asking a person when the policy says `ask`. */
  async admit(
    facts: ToolFacts,
    call: CallContext,
    connection = "",
  ): Promise<Admission> {
    const verdict = evaluate(await this.#judged, facts);
    const name = `${facts.server}.${facts.tool}`;
    if (verdict.decision === "allow") {
      return {
        allowed: true,
        decision: "allowed",
        rule: verdict.rule,
        decided_by: null,
      };
    }
    if (verdict.decision === "deny") {
      return {
        allowed: false,
        decision: "denied",
        rule: verdict.rule,
        decided_by: null,
        message:
          `Denied by policy rule "${verdict.rule}": ${name} is not allowed for ${
            callerName(facts)
          }.`,
      };
    }
    // A session is the MCP session, else the connection (stdio, in-process link).
    const session = call.sessionId ?? connection;
    const grant = `${session}|${callerName(facts)}|${name}`;
    if (session !== "" && this.#grants.has(grant)) {
      return {
        allowed: true,
        decision: "approved",
        rule: verdict.rule,
        decided_by: "session grant",
      };
    }
    const answer = await this.#ask(facts, verdict.rule, call);
    if (answer.approved && answer.scope === "session") {
      if (session !== "") this.#grants.add(grant);
    }
    if (answer.approved) {
      return {
        allowed: true,
        decision: "approved",
        rule: verdict.rule,
        decided_by: answer.by,
      };
    }
    return {
      allowed: false,
      decision: answer.timeout ? "timeout" : "declined",
      rule: verdict.rule,
      decided_by: answer.by,
      message: answer.timeout
        ? `Denied: policy rule "${verdict.rule}" requires approval for ${name} and none came within ${
          Math.round(this.#policy.ask_timeout_ms / 1000)
        } s.`
        : `Denied: ${answer.by} declined ${name} (policy rule "${verdict.rule}" asks before it runs).`,
    };
  }

  async #ask(
    facts: ToolFacts,
    rule: string,
    call: CallContext,
  ): Promise<
    { approved: boolean; by: string; scope: Scope; timeout: boolean }
  > {
    const asker = outerCall.getStore() ?? call;
    const timeout = this.#policy.ask_timeout_ms;
    const params = this.#question(facts, rule, call);
    // An agent-bound caller (or a chain an agent started) is the one being
    // judged: its own client must never approve its call.
    const judgedCaller = facts.caller.agent !== undefined ||
      asker.caller.agent !== undefined;
    if (!judgedCaller) {
      try {
        const elicited = asker.elicit(params).then((result) => ({
          approved: result.action === "accept",
          by: "the user (elicitation)",
          scope: scopeOf(result),
          timeout: false,
        }));
        // A client without the capability rejects at once: then the pending list.
        return await withTimeout(elicited, timeout, call.signal);
      } catch (error) {
        if (error instanceof TimeoutError) {
          return {
            approved: false,
            by: "nobody",
            scope: "once",
            timeout: true,
          };
        }
        if (!(error instanceof ToolError)) {
          this.log.warn("elicitation_failed", { error: messageOf(error) });
        }
      }
    }
    return await this.#pending(facts, rule, call, timeout, params);
  }

  #question(
    facts: ToolFacts,
    rule: string,
    call: CallContext,
  ): ElicitRequestFormParams {
    return {
      message: `${callerName(facts)}${
        call.sessionId ? ` (session ${call.sessionId})` : ""
      } asks to run ${facts.server}.${facts.tool} with ${
        clip(JSON.stringify(facts.args), 2000)
      }. Policy rule "${rule}" asks a person first. Allow it?`,
      requestedSchema: {
        type: "object",
        properties: {
          scope: {
            type: "string",
            title: "Allow for",
            enum: ["once", "session"],
            description:
              "once: this call only; session: this tool for the rest of the session",
            default: "once",
          },
        },
      },
    };
  }

  async #pending(
    facts: ToolFacts,
    rule: string,
    call: CallContext,
    timeout: number,
    question: ElicitRequestFormParams,
  ): Promise<
    { approved: boolean; by: string; scope: Scope; timeout: boolean }
  > {
    const now = this.clock();
    const approval: Approval = {
      id: crypto.randomUUID().slice(0, 8),
      created: new Date(now).toISOString(),
      expires: new Date(now + timeout).toISOString(),
      caller: callerName(facts),
      session: call.sessionId ?? null,
      server: facts.server,
      tool: facts.tool,
      args: redactArgs(facts.args),
      rule,
      status: "pending",
      decided_by: null,
      scope: null,
    };
    const { promise, resolve } = Promise.withResolvers<
      { approved: boolean; by: string; scope: Scope }
    >();
    this.#waiting.set(approval.id, {
      approval,
      // The operator's whole view of the call (kept in memory, never stored):
      // a payload padded past a short excerpt must not hide from them.
      runs: `${facts.server}.${facts.tool} ${
        clip(JSON.stringify(facts.args), 1_048_576)
      }`,
      settle: resolve,
    });
    // Keyed by time first, so retention drops them with the audit.
    const key = ["approvals", `${approval.created}-${approval.id}`];
    await this.store.set(key, approval);
    this.log.info("approval_pending", {
      id: approval.id,
      server: facts.server,
      tool: facts.tool,
      caller: approval.caller,
    });
    // Say so to the outermost caller (an agent's turn streams it): progress and a log message.
    const told = outerCall.getStore() ?? call;
    const waitingFor =
      `Waiting for a person to approve ${facts.server}.${facts.tool} (approval ${approval.id}: ` +
      `agentd approve ${approval.id} or deny ${approval.id}, or the dashboard); denied after ${
        Math.round(timeout / 1000)
      } s`;
    await told.progress(0, undefined, waitingFor).catch(() => {});
    await told.log("warning", { approval: approval.id, message: waitingFor })
      .catch(() => {});
    told.awaiting?.(waitingFor);
    // Connected operator clients that can elicit are asked too; the first answer decides.
    const asked = new AbortController();
    for (const operator of this.#operators) {
      operator.elicit(question, { signal: asked.signal, timeout })
        .then((result) => {
          // Dismissed (`cancel`) by one operator client: the others and the pending list still can.
          if (result.action === "cancel") return;
          this.decide(
            approval.id,
            result.action === "accept",
            "the operator (elicitation)",
            scopeOf(result),
          );
        })
        .catch((error) => {
          if (!asked.signal.aborted) {
            this.log.warn("elicitation_failed", { error: messageOf(error) });
          }
        });
    }
    let answer: { approved: boolean; by: string; scope: Scope };
    let timedOut = false;
    try {
      answer = await withTimeout(promise, timeout, call.signal);
    } catch {
      timedOut = true;
      answer = { approved: false, by: "nobody", scope: "once" };
    } finally {
      this.#waiting.delete(approval.id);
      asked.abort();
      told.awaiting?.(undefined);
    }
    const settled: Approval = {
      ...approval,
      status: timedOut ? "timeout" : answer.approved ? "approved" : "denied",
      decided_by: answer.by,
      scope: answer.approved ? answer.scope : null,
    };
    this.#recent.push(settled);
    if (this.#recent.length > 100) this.#recent.shift();
    await this.store.set(key, settled);
    return { ...answer, timeout: timedOut };
  }

  /** The operator's answer to a pending approval; false when no such approval waits. */
  decide(
    id: string,
    approved: boolean,
    by: string,
    scope: Scope = "once",
  ): boolean {
    const waiting = this.#waiting.get(id);
    if (!waiting) return false;
    waiting.settle({ approved, by, scope });
    return true;
  }

  /** Approvals, pending first (with `runs`: the call, arguments unredacted); recent settled ones after. */
  approvals(): Approval[] {
    const pending = [...this.#waiting.values()].map((waiting) => ({
      ...waiting.approval,
      runs: waiting.runs,
    }));
    return [...pending, ...[...this.#recent].reverse()];
  }

  /** The audit record of a call whose arguments failed validation (it never ran). */
  recordInvalid(facts: ToolFacts, session: string | undefined): void {
    void this.audit.append({
      caller: callerName(facts),
      session: session ?? null,
      server: facts.server,
      tool: facts.tool,
      args: redactArgs(facts.args),
      decision: "invalid",
      rule: "none",
      decided_by: null,
      outcome: "refused",
      duration_ms: 0,
    }).catch((error) =>
      this.log.warn("audit_failed", { error: messageOf(error) })
    );
  }

  /** Runs a call under the policy and writes its audit record. */
  async run(
    facts: ToolFacts,
    call: CallContext,
    execute: () => Promise<CallToolResult>,
    connection?: string,
  ): Promise<CallToolResult> {
    const started = performance.now();
    const admission = await this.admit(facts, call, connection);
    let result: CallToolResult | undefined;
    let failed = false;
    try {
      result = admission.allowed ? await execute() : {
        isError: true,
        content: [{
          type: "text",
          text: admission.message ?? "Denied by policy",
        }],
      };
      return result;
    } catch (error) {
      failed = true;
      throw error;
    } finally {
      const record = {
        caller: callerName(facts),
        session: call.sessionId ?? null,
        server: facts.server,
        tool: facts.tool,
        args: redactArgs(facts.args),
        decision: admission.decision,
        rule: admission.rule,
        decided_by: admission.decided_by,
        outcome: !admission.allowed
          ? "refused" as const
          : failed || result?.isError === true
          ? "error" as const
          : "ok" as const,
        duration_ms: Math.round(performance.now() - started),
      };
      // Not awaited: the record joins the next group commit while the answer
      // goes out (a commit per call was most of a routed call's added time);
      // shutdown and audit queries flush it first.
      void this.audit.append(record).catch((error) =>
        this.log.warn("audit_failed", { error: messageOf(error) })
      );
    }
  }
}

/**
 * The policy with each absolute path glob (rule arguments, write roots) also
 * in its real spelling: arguments are judged as real paths, so a rule
 * written through a link (`/tmp` on macOS) still matches them.
 */
async function withRealPatterns(policy: PolicyConfig): Promise<PolicyConfig> {
  const both = async (patterns: readonly string[]) => {
    const out = [...patterns];
    for (const pattern of patterns) {
      const real = await realPattern(pattern).catch(() => undefined);
      if (real !== undefined && !out.includes(real)) out.push(real);
    }
    return out;
  };
  const rules = [];
  for (const rule of policy.rules) {
    if (rule.args === undefined) {
      rules.push(rule);
      continue;
    }
    const args: Record<string, string[]> = {};
    for (const [name, wanted] of Object.entries(rule.args)) {
      args[name] = await both(typeof wanted === "string" ? [wanted] : wanted);
    }
    rules.push({ ...rule, args });
  }
  return { ...policy, rules, write_roots: await both(policy.write_roots) };
}

class TimeoutError extends Error {}

function scopeOf(result: ElicitResult): Scope {
  return result.content?.scope === "session" ? "session" : "once";
}

function withTimeout<T>(
  promise: Promise<T>,
  ms: number,
  signal: AbortSignal,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new TimeoutError()), ms);
    const abort = () => reject(new TimeoutError());
    signal.addEventListener("abort", abort, { once: true });
    promise.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal.removeEventListener("abort", abort);
    });
  });
}

export function callerName(facts: { caller: { agent?: string } }): string {
  return facts.caller.agent === undefined
    ? "local"
    : `agent:${facts.caller.agent}`;
}

/**
 * At most `max` characters of a call's text, its start and its end: what a
 * caller wants hidden can sit at either, and the cut says so plainly.
 */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)} …[${
    text.length - 2 * half
  } characters not shown: read the whole call in the pending list (agentd approvals) before allowing it]… ${
    text.slice(-half)
  }`;
}
