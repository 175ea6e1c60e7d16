// Agents, teams and runs in the Store. Names are unique regardless of case
// through an index key (nameKey) written in the same atomic commit as the
// record (a failed check is a Conflict); ids sort by creation time, so
// listing in key order lists oldest first.
//
// Keys (under the service's scope): ["agent", id], ["agent_name", nameKey] → id,
// ["team", id], ["team_name", nameKey] → id, ["run", id], ["team_run", team, run],
// ["active_run", run] → RunLease (runs that have not finished; the process
// running one renews its lease, and a run whose lease is stale or whose process
// is gone is marked interrupted by any daemon on the store), ["run_cancel", run]
// → CancelRequest (who asked a running run to stop; gone when it ends).

import { Conflict, Invalid, NotFound } from "./errors.ts";
import {
  type JsonValue,
  MAX_LIST_LIMIT,
  type Mutation,
  type Store,
  StoreError,
  type StoreKey,
} from "../platform/store/mod.ts";
import { ID_PATTERN } from "./ids.ts";
import { z } from "zod";
import { deadLease, Lease } from "../platform/leases.ts";
import { Agent, nameKey, Run, Team } from "./schemas.ts";
import { CatalogView } from "./catalog_view.ts";

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

export interface PageRequest {
  limit: number;
  cursor?: string;
}

/** Who asked a running run to stop, and when. */
export const CancelRequest = z.object({
  /** `operator`, or `agent:<name>`. */
  by: z.string(),
  at: z.string(),
});
export type CancelRequest = z.output<typeof CancelRequest>;

/** Who is running a run: the value of ["active_run", id] while it runs. */
export const RunLease = Lease;
export type RunLease = Lease;

/** Why a run was marked interrupted. */
export type InterruptReason =
  /** `true`, written before runs had leases. */
  | "legacy"
  /** Not a lease at all. */
  | "malformed"
  /** Its process (on this host) no longer exists. */
  | "process_gone"
  /** Not renewed for longer than `staleMs`. */
  | "stale";

export interface InterruptOptions {
  /** A lease not renewed for longer than this is a dead process's. */
  staleMs: number;
  /** This machine's name; default Deno.hostname(). */
  host?: string;
}

export interface InterruptedRun {
  id: string;
  reason: InterruptReason;
}

type Kind = "agent" | "team";

/** Longer refs name nothing (names are at most 64 characters); they never reach a store key. */
const MAX_REF_CHARS = 256;
const LABEL = { agent: "Agent", team: "Team" } as const;

export class Repository {
  // Agents and teams are read from memory, checked against one version key per read.
  readonly #views: { agent: CatalogView<Agent>; team: CatalogView<Team> };

  constructor(private readonly store: Store) {
    this.#views = {
      agent: new CatalogView(store, "agent", (value) => Agent.parse(value)),
      team: new CatalogView(store, "team", (value) => Team.parse(value)),
    };
  }

  // ---- agents and teams (same shape: id, unique name) ------------------------

  createAgent(agent: Agent): Promise<Agent> {
    return this.#create("agent", agent);
  }

  findAgent(ref: string): Promise<Agent | undefined> {
    return this.#findIn(this.#views.agent, "agent", ref, (v) => Agent.parse(v));
  }

  async getAgent(ref: string): Promise<Agent> {
    return await this.findAgent(ref) ?? notFound("Agent", ref, "/v1/agents");
  }

  listAgents(page: PageRequest): Promise<Page<Agent>> {
    return this.#listIn(
      this.#views.agent,
      "agent",
      page,
      (v) => Agent.parse(v),
    );
  }

  deleteAgent(agent: Agent): Promise<void> {
    return this.#delete("agent", agent);
  }

  createTeam(team: Team): Promise<Team> {
    return this.#create("team", team);
  }

  findTeam(ref: string): Promise<Team | undefined> {
    return this.#findIn(this.#views.team, "team", ref, (v) => Team.parse(v));
  }

  async getTeam(ref: string): Promise<Team> {
    return await this.findTeam(ref) ?? notFound("Team", ref, "/v1/teams");
  }

  listTeams(page: PageRequest): Promise<Page<Team>> {
    return this.#listIn(this.#views.team, "team", page, (v) => Team.parse(v));
  }

  deleteTeam(team: Team): Promise<void> {
    return this.#delete("team", team);
  }

  async #create<T extends Agent | Team>(kind: Kind, record: T): Promise<T> {
    const indexKey = [`${kind}_name`, nameKey(record.name)];
    const result = await this.store.commit({
      checks: [{ key: indexKey, version: null }],
      mutations: [
        { type: "set", key: [kind, record.id], value: toJson(record) },
        { type: "set", key: indexKey, value: record.id },
        this.#views[kind].bump(),
      ],
    });
    if (!result.ok) {
      throw new Conflict(
        `${
          LABEL[kind]
        } name "${record.name}" is taken; choose another name or delete the existing ${kind}`,
        { name: record.name },
      );
    }
    return record;
  }

  /** From the view; the store's index and record when the view is too large to keep. */
  async #findIn<T extends Agent | Team>(
    view: CatalogView<T>,
    kind: Kind,
    ref: string,
    parse: (value: JsonValue) => T,
  ): Promise<T | undefined> {
    const snapshot = await view.current();
    if (snapshot === undefined) return await this.#find(kind, ref, parse);
    if (ID_PATTERN.test(ref)) return snapshot.byId.get(ref);
    if (ref.length === 0 || ref.length > MAX_REF_CHARS) return undefined;
    return snapshot.byName.get(nameKey(ref));
  }

  /** A first page that holds every record comes from the view; other pages from the store. */
  async #listIn<T extends Agent | Team>(
    view: CatalogView<T>,
    kind: Kind,
    page: PageRequest,
    parse: (value: JsonValue) => T,
  ): Promise<Page<T>> {
    const valid = page.cursor === undefined && Number.isInteger(page.limit) &&
      page.limit >= 1 && page.limit <= MAX_LIST_LIMIT;
    const snapshot = valid ? await view.current() : undefined;
    if (snapshot !== undefined && snapshot.records.length <= page.limit) {
      return snapshot.page;
    }
    return await this.#list([kind], page, parse);
  }

  async #find<T>(
    kind: Kind,
    ref: string,
    parse: (value: JsonValue) => T,
  ): Promise<T | undefined> {
    let id = ref;
    if (!ID_PATTERN.test(ref)) {
      if (ref.length === 0 || ref.length > MAX_REF_CHARS) return undefined;
      const index = await this.store.get([`${kind}_name`, nameKey(ref)]);
      if (typeof index?.value !== "string") return undefined;
      id = index.value;
    }
    const entry = await this.store.get([kind, id]);
    if (entry === null) return undefined;
    return parse(entry.value);
  }

  async #delete(kind: Kind, record: Agent | Team): Promise<void> {
    const indexKey = [`${kind}_name`, nameKey(record.name)];
    const index = await this.store.get(indexKey);
    const mutations: Mutation[] = [
      { type: "delete", key: [kind, record.id] },
      this.#views[kind].bump(),
    ];
    // The name may already point at a newer record of the same name.
    if (index?.value === record.id) {
      mutations.push({ type: "delete", key: indexKey });
    }
    await this.store.commit({ mutations });
  }

  // ---- runs -------------------------------------------------------------------

  /** Writes a run; a `running` one needs the lease of the process running it. */
  async saveRun(run: Run, lease?: RunLease): Promise<void> {
    await this.store.commit({ mutations: runMutations(run, lease) });
  }

  /**
   * Renews this process's lease on a running run. False when there is nothing
   * to renew: the run ended, or another daemon took it for a dead one's.
   */
  async renewLease(id: string, lease: RunLease): Promise<boolean> {
    const key = ["active_run", id];
    const entry = await this.store.get(key);
    if (entry === null) return false;
    const current = RunLease.safeParse(entry.value);
    if (!current.success || current.data.owner !== lease.owner) return false;
    // A failed check means a save of the run wrote the key meanwhile: that
    // save carried a fresh lease (or ended the run), so there is nothing to do.
    await this.store.commit({
      checks: [{ key, version: entry.version }],
      mutations: [{ type: "set", key, value: toJson(lease) }],
    });
    return true;
  }

  /**
   * Asks the process running `id` to stop it (it reads the request at its
   * next lease renewal, or at once when it is this one). False when the run
   * is not running (anymore): the caller tells the person so.
   */
  async requestCancel(id: string, request: CancelRequest): Promise<boolean> {
    const stored = ID_PATTERN.test(id)
      ? await this.store.get(["run", id])
      : null;
    if (stored === null) return notFound("Run", id, "/v1/runs");
    if (Run.parse(stored.value).status !== "running") return false;
    const result = await this.store.commit({
      checks: [{ key: stored.key, version: stored.version }],
      mutations: [{
        type: "set",
        key: ["run_cancel", id],
        value: toJson(request),
      }],
    });
    // The run was saved meanwhile (a turn ended, or the run did): look again.
    return result.ok || await this.requestCancel(id, request);
  }

  /** The cancel request of a running run, if any. */
  async cancelRequest(id: string): Promise<CancelRequest | undefined> {
    const entry = await this.store.get(["run_cancel", id]);
    const parsed = CancelRequest.safeParse(entry?.value);
    return parsed.success ? parsed.data : undefined;
  }

  async getRun(id: string): Promise<Run> {
    const entry = ID_PATTERN.test(id)
      ? await this.store.get(["run", id])
      : null;
    if (entry === null) return notFound("Run", id, "/v1/runs");
    return Run.parse(entry.value);
  }

  async listRuns(
    page: PageRequest,
    teamId?: string,
  ): Promise<Page<Run>> {
    if (teamId === undefined) {
      return await this.#list(["run"], page, (value) => Run.parse(value));
    }
    const ids = await this.#list(
      ["team_run", teamId],
      page,
      (_value, key) => String(key.at(-1)),
    );
    const entries = await this.store.getMany(ids.data.map((id) => ["run", id]));
    return {
      data: entries.flatMap((entry) => entry ? [Run.parse(entry.value)] : []),
      next_cursor: ids.next_cursor,
    };
  }

  /**
   * Marks `interrupted` the running runs whose process is gone: a legacy or
   * malformed lease, a stale one, or one of a dead process on this host. Runs
   * of live processes (this one included) are left alone.
   */
  async interruptActiveRuns(
    now: string,
    options: InterruptOptions,
  ): Promise<InterruptedRun[]> {
    const host = options.host ?? Deno.hostname();
    const nowMs = Date.parse(now);
    const interrupted: InterruptedRun[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.store.list(["active_run"], {
        limit: 100,
        cursor,
      });
      for (const entry of page.entries) {
        const id = String(entry.key.at(-1));
        const stored = await this.store.get(["run", id]);
        const run = stored === null ? undefined : Run.parse(stored.value);
        if (stored === null || run?.status !== "running") {
          await this.store.commit({
            checks: [{ key: entry.key, version: entry.version }],
            mutations: [{ type: "delete", key: entry.key }],
          });
          continue;
        }
        const reason = deadLeaseReason(entry.value, {
          ...options,
          host,
          nowMs,
        });
        if (reason === undefined) continue;
        // Both checks: the owner may renew or finish the run meanwhile.
        const result = await this.store.commit({
          checks: [
            { key: entry.key, version: entry.version },
            { key: stored.key, version: stored.version },
          ],
          mutations: runMutations({
            ...run,
            status: "interrupted",
            stop_reason: "interrupted",
            error: {
              code: "interrupted",
              message:
                "The daemon stopped while this run was in progress; execute the task again to retry",
            },
            finished_at: now,
          }),
        });
        if (result.ok) interrupted.push({ id, reason });
      }
      cursor = page.cursor ?? undefined;
    } while (cursor !== undefined);
    return interrupted;
  }

  // ---- shared -------------------------------------------------------------------

  async #list<T>(
    prefix: StoreKey,
    page: PageRequest,
    read: (value: JsonValue, key: StoreKey) => T,
  ): Promise<Page<T>> {
    let listed;
    try {
      listed = await this.store.list(prefix, {
        limit: page.limit,
        cursor: page.cursor,
      });
    } catch (error) {
      if (error instanceof StoreError && /cursor/i.test(error.message)) {
        throw new Invalid(
          "Invalid cursor: pass the next_cursor of a previous page unchanged",
          { field: "cursor" },
        );
      }
      throw error;
    }
    return {
      data: listed.entries.map((entry) => read(entry.value, entry.key)),
      next_cursor: listed.cursor,
    };
  }
}

function runMutations(run: Run, lease?: RunLease): Mutation[] {
  let active: Mutation = { type: "delete", key: ["active_run", run.id] };
  if (run.status === "running") {
    if (lease === undefined) {
      throw new Error(
        `Cannot save running run ${run.id}: a running run needs its lease`,
      );
    }
    active = { type: "set", key: ["active_run", run.id], value: toJson(lease) };
  }
  const mutations: Mutation[] = [
    { type: "set", key: ["run", run.id], value: toJson(run) },
    { type: "set", key: ["team_run", run.team_id, run.id], value: true },
    active,
  ];
  // An ended run has nothing left to cancel.
  if (run.status !== "running") {
    mutations.push({ type: "delete", key: ["run_cancel", run.id] });
  }
  return mutations;
}

/** Why the lease `value` is a dead process's, or undefined when its process may be alive. */
function deadLeaseReason(
  value: JsonValue,
  options: { staleMs: number; host: string; nowMs: number },
): InterruptReason | undefined {
  if (value === true) return "legacy";
  const parsed = RunLease.safeParse(value);
  if (!parsed.success) return "malformed";
  return deadLease(parsed.data, options);
}

function notFound(label: string, ref: string, list: string): never {
  throw new NotFound(
    `${label} "${ref}" not found; GET ${list} lists them`,
    { id: ref },
  );
}

/** Records are zod outputs of JSON-safe schemas; this re-checks that at the seam. */
function toJson(value: unknown): JsonValue {
  return JSON.parse(JSON.stringify(value));
}
