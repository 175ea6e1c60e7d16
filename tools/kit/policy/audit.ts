// The audit trail: one record per tool call of every server, kept in the
// store with retention, with argument summaries that never hold a value that
// could be secret (contents, scripts, tokens are reduced to their length).

import type {
  CommitRide,
  JsonValue,
  Store,
} from "../../../platform/store/mod.ts";
import { publicUrl } from "../../../platform/log.ts";

export interface AuditRecord {
  [key: string]: JsonValue;
  id: string;
  time: string;
  /** `local` for unbound callers, else `agent:<name>`. */
  caller: string;
  session: string | null;
  server: string;
  tool: string;
  args: { [key: string]: JsonValue };
  /** `allowed`, `denied`, `approved` or `declined` (asked, then answered), `timeout`, `invalid` (bad arguments). */
  decision: string;
  rule: string;
  /** Who answered an `ask`: `elicitation`, `operator (cli/http)`, `session grant`; null when not asked. */
  decided_by: string | null;
  outcome: "ok" | "error" | "refused";
  duration_ms: number;
}

export interface AuditQuery {
  server?: string;
  tool?: string;
  caller?: string;
  since?: string;
  limit?: number;
}

/** Argument names whose values are never kept, only their size. */
const SENSITIVE =
  /token|secret|password|passwd|key|auth|cookie|credential|content|script|value|text|body|data|header|code/i;
const MAX_STRING = 160;

/** A summary of the arguments with no sensitive value in it. */
export function redactArgs(
  args: Record<string, unknown>,
): { [key: string]: JsonValue } {
  const summary: { [key: string]: JsonValue } = {};
  for (const [name, value] of Object.entries(args)) {
    summary[name] = redactValue(name, value, 0);
  }
  return summary;
}

function redactValue(
  name: string,
  value: unknown,
  depth: number,
): JsonValue {
  if (value === null || value === undefined) return null;
  if (typeof value === "number" || typeof value === "boolean") {
    return SENSITIVE.test(name) ? `<${typeof value}>` : value;
  }
  if (typeof value === "string") {
    if (SENSITIVE.test(name)) return `<${value.length} chars>`;
    // A URL may carry a password or a token in its query: keep neither.
    const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(value)
      ? publicUrl(value)
      : value;
    return text.length > MAX_STRING
      ? `${text.slice(0, MAX_STRING)}… (${text.length} chars)`
      : text;
  }
  if (depth >= 2 || SENSITIVE.test(name)) {
    return Array.isArray(value) ? `<${value.length} items>` : "<object>";
  }
  if (Array.isArray(value)) {
    return value.slice(0, 20).map((item) => redactValue(name, item, depth + 1));
  }
  if (typeof value === "object") {
    const out: { [key: string]: JsonValue } = {};
    for (const [key, inner] of Object.entries(value)) {
      out[key] = redactValue(key, inner, depth + 1);
    }
    return out;
  }
  return `<${typeof value}>`;
}

/** Appends records under `["audit", <time>-<seq>]`; drops those past retention. */
/** Records per commit: well under the Store's 100 keys per commit. */
const BATCH = 50;
/**
 * How long a record waits for others before its commit (unless a batch is
 * full): each commit is a disk sync on the store the tools write to, and a
 * commit per call put one more sync between a sequential client's writes.
 */
export const AUDIT_DELAY_MS = 20;
/** Records appended between two retention runs. */
const PRUNE_EVERY = 200;

interface PendingRecord {
  key: ["audit", string];
  value: { [key: string]: JsonValue };
  written: PromiseWithResolvers<void>;
}

export class AuditTrail {
  #seq = 0;
  #writes = 0;
  #pending: PendingRecord[] = [];
  #committing: Promise<void> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #pruning: Promise<number> | undefined;
  /** Removes the rider while records wait (see #ride). */
  #unride: (() => void) | undefined;
  /** Records on board another commit, until it is over. */
  #riding = new Set<Promise<void>>();

  constructor(
    private readonly store: Store,
    private readonly retentionDays: () => number,
    private readonly clock: () => number = Date.now,
    private readonly delayMs: number = AUDIT_DELAY_MS,
    /** Told when a retention run fails (it is retried at the next count). */
    private readonly onPruneFailed: (error: unknown) => void = () => {},
  ) {}

  /**
   * Queues the record and resolves once it is committed. Callers on a call's
   * path do not wait for it (see `Guard.run`): the record joins the commit
   * of the records queued within `delayMs`; `flush()` and `query()` commit
   * what is queued at once and wait for it.
   */
  async append(record: Omit<AuditRecord, "id" | "time">): Promise<void> {
    const now = this.clock();
    const time = new Date(now).toISOString();
    const id = `${time}-${String(this.#seq++ % 1_000_000).padStart(6, "0")}`;
    const written = Promise.withResolvers<void>();
    this.#pending.push({
      key: ["audit", id],
      value: { ...record, id, time },
      written,
    });
    this.#ride();
    if (this.#pending.length >= BATCH) this.#commitPending();
    else this.#timer ??= setTimeout(() => this.#commitPending(), this.delayMs);
    await written.promise;
    // Retention runs beside the calls, never in front of a record's answer.
    if (this.#writes++ % PRUNE_EVERY === 0) this.#startPrune(now);
  }

  /**
   * While records wait, they board the next commit anyone makes on the store
   * (a conversation's append, a memory write): one disk sync for both, and
   * no commit of their own landing in the middle of a call's reads (Deno KV
   * answers a read only after the commit in flight). The timer still commits
   * what no other commit took.
   */
  #ride(): void {
    if (this.#unride !== undefined || this.#pending.length === 0) return;
    this.#unride = this.store.addCommitRider?.({
      board: (room) => this.#board(room),
    });
  }

  #stopRiding(): void {
    if (this.#pending.length > 0 || this.#unride === undefined) return;
    this.#unride();
    this.#unride = undefined;
  }

  #board(room: number): CommitRide | undefined {
    if (this.#pending.length === 0) return undefined;
    const batch = this.#pending.splice(0, Math.min(room, BATCH));
    if (this.#pending.length === 0 && this.#timer !== undefined) {
      // The next record waits its own delay for others.
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    this.#stopRiding();
    const over = Promise.withResolvers<void>();
    this.#riding.add(over.promise);
    return {
      mutations: batch.map(({ key, value }) => ({
        type: "set" as const,
        key,
        value,
        newKey: true,
      })),
      landed: (ok) => {
        if (ok) {
          for (const record of batch) record.written.resolve();
        } else {
          // Not committed with that commit: they wait for the next one (or the timer).
          this.#pending.unshift(...batch);
          this.#ride();
          if (!this.#committing) {
            this.#timer ??= setTimeout(
              () => this.#commitPending(),
              this.delayMs,
            );
          }
        }
        this.#riding.delete(over.promise);
        over.resolve();
      },
    };
  }

  #startPrune(now: number): void {
    if (this.#pruning) return; // one at a time; the next count starts another
    const run = this.prune(now);
    this.#pruning = run;
    // A failed run is retried at the next count; `pruned()` reports it.
    run.catch(this.onPruneFailed).finally(() => {
      if (this.#pruning === run) this.#pruning = undefined;
    });
  }

  /** Resolves once the retention run started by `append` (if any) is over; rejects if it failed. */
  async pruned(): Promise<void> {
    await this.#pruning;
  }

  /**
   * Group commit: records of calls that end close together are written in
   * one commit, each caller answered once its record is stored (a write per
   * call serialised every call of every server behind the store).
   */
  #commitPending(): void {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#committing || this.#pending.length === 0) return;
    this.#committing = (async () => {
      // Records that came in during a commit join the next full batch or wait
      // `delayMs` for others (below): committing them at once made each flush
      // two disk syncs, the second often for one record.
      do {
        const batch = this.#pending.splice(0, BATCH);
        this.#stopRiding();
        if (batch.length === 0) break;
        try {
          await this.store.commit({
            // Each record's key is new: the store need not read it first.
            mutations: batch.map(({ key, value }) => ({
              type: "set" as const,
              key,
              value,
              newKey: true,
            })),
          });
          for (const record of batch) record.written.resolve();
        } catch (error) {
          for (const record of batch) record.written.reject(error);
        }
      } while (this.#pending.length >= BATCH);
    })().finally(() => {
      this.#committing = undefined;
      // Records that came in during the commit wait for others again.
      if (this.#pending.length > 0) {
        this.#timer ??= setTimeout(() => this.#commitPending(), this.delayMs);
      }
    });
  }

  /** Commits what is queued now; resolves once every record appended so far is committed (or failed). */
  async flush(): Promise<void> {
    if (this.#pending.length > 0) this.#commitPending();
    // Records that boarded another commit are waited for too.
    while (this.#committing || this.#riding.size > 0) {
      await Promise.all([this.#committing, ...this.#riding]);
      if (this.#pending.length > 0) this.#commitPending();
    }
  }

  /** Deletes audit records and settled approvals older than the retention period. */
  async prune(now = this.clock()): Promise<number> {
    const cutoff = new Date(now - this.retentionDays() * 86_400_000)
      .toISOString();
    return await this.#pruneUnder("audit", cutoff) +
      await this.#pruneUnder("approvals", cutoff);
  }

  /** Keys under `prefix` start with their ISO time, so the old ones come first. */
  async #pruneUnder(prefix: string, cutoff: string): Promise<number> {
    let removed = 0;
    let cursor: string | undefined;
    // The first page holds one key: most runs find nothing old, and a page
    // of 500 read and decoded 500 records to learn it.
    let limit = 1;
    do {
      const page = await this.store.list([prefix], { limit, cursor });
      limit = 500;
      for (const entry of page.entries) {
        const id = entry.key[1];
        if (typeof id !== "string" || id >= cutoff) return removed;
        await this.store.delete(entry.key);
        removed++;
      }
      cursor = page.cursor ?? undefined;
    } while (cursor !== undefined);
    return removed;
  }

  /** Records in time order, filtered. */
  async query(query: AuditQuery = {}): Promise<AuditRecord[]> {
    await this.flush(); // a call answered before this query is in it
    const limit = Math.min(query.limit ?? 1000, 10_000);
    const found: AuditRecord[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.store.list(["audit"], { limit: 500, cursor });
      for (const entry of page.entries) {
        const record = asRecord(entry.value);
        if (!record || !wanted(record, query)) continue;
        found.push(record);
      }
      cursor = page.cursor ?? undefined;
    } while (cursor !== undefined);
    return found.slice(-limit);
  }
}

function wanted(record: AuditRecord, query: AuditQuery): boolean {
  return (query.server === undefined || record.server === query.server) &&
    (query.tool === undefined || record.tool === query.tool) &&
    (query.caller === undefined || record.caller === query.caller) &&
    (query.since === undefined || record.time >= query.since);
}

function asRecord(value: JsonValue): AuditRecord | undefined {
  if (
    typeof value !== "object" || value === null || Array.isArray(value) ||
    typeof value.id !== "string" || typeof value.time !== "string" ||
    typeof value.server !== "string" || typeof value.tool !== "string" ||
    typeof value.caller !== "string" || typeof value.decision !== "string" ||
    typeof value.rule !== "string" || typeof value.outcome !== "string" ||
    typeof value.duration_ms !== "number"
  ) return undefined;
  const outcome = value.outcome;
  if (outcome !== "ok" && outcome !== "error" && outcome !== "refused") {
    return undefined;
  }
  const args = value.args;
  return {
    id: value.id,
    time: value.time,
    caller: value.caller,
    session: typeof value.session === "string" ? value.session : null,
    server: value.server,
    tool: value.tool,
    args: typeof args === "object" && args !== null && !Array.isArray(args)
      ? args
      : {},
    decision: value.decision,
    rule: value.rule,
    decided_by: typeof value.decided_by === "string" ? value.decided_by : null,
    outcome,
    duration_ms: value.duration_ms,
  };
}
