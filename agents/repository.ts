// Agents, teams and runs in the Store. Names are unique through an index key
// written in the same atomic commit as the record (a failed check is a 409);
// ids sort by creation time, so listing in key order lists oldest first.
//
// Keys (under the service's scope): ["agent", id], ["agent_name", name] → id,
// ["team", id], ["team_name", name] → id, ["run", id], ["team_run", team, run],
// ["active_run", run] (runs that have not finished; marked interrupted at start).

import { HttpError } from "../platform/http_errors.ts";
import {
  type JsonValue,
  type Store,
  StoreError,
  type StoreKey,
} from "../platform/store.ts";
import { ID_PATTERN } from "./ids.ts";
import { Agent, NAME_PATTERN, Run, Team } from "./schemas.ts";

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

export interface PageRequest {
  limit: number;
  cursor?: string;
}

type Kind = "agent" | "team";

const LABEL = { agent: "Agent", team: "Team" } as const;

export class Repository {
  constructor(private readonly store: Store) {}

  // ---- agents and teams (same shape: id, unique name) ------------------------

  createAgent(agent: Agent): Promise<Agent> {
    return this.#create("agent", agent);
  }

  findAgent(ref: string): Promise<Agent | undefined> {
    return this.#find("agent", ref, (value) => Agent.parse(value));
  }

  async getAgent(ref: string): Promise<Agent> {
    return await this.findAgent(ref) ?? notFound("Agent", ref, "/v1/agents");
  }

  listAgents(page: PageRequest): Promise<Page<Agent>> {
    return this.#list(["agent"], page, (value) => Agent.parse(value));
  }

  deleteAgent(agent: Agent): Promise<void> {
    return this.#delete("agent", agent);
  }

  createTeam(team: Team): Promise<Team> {
    return this.#create("team", team);
  }

  findTeam(ref: string): Promise<Team | undefined> {
    return this.#find("team", ref, (value) => Team.parse(value));
  }

  async getTeam(ref: string): Promise<Team> {
    return await this.findTeam(ref) ?? notFound("Team", ref, "/v1/teams");
  }

  listTeams(page: PageRequest): Promise<Page<Team>> {
    return this.#list(["team"], page, (value) => Team.parse(value));
  }

  deleteTeam(team: Team): Promise<void> {
    return this.#delete("team", team);
  }

  async #create<T extends Agent | Team>(kind: Kind, record: T): Promise<T> {
    const nameKey = [`${kind}_name`, record.name];
    const result = await this.store.commit({
      checks: [{ key: nameKey, version: null }],
      mutations: [
        { type: "set", key: [kind, record.id], value: toJson(record) },
        { type: "set", key: nameKey, value: record.id },
      ],
    });
    if (!result.ok) {
      throw new HttpError(
        409,
        `${
          LABEL[kind]
        } name "${record.name}" is taken; choose another name or delete the existing ${kind}`,
        { name: record.name },
      );
    }
    return record;
  }

  async #find<T>(
    kind: Kind,
    ref: string,
    parse: (value: JsonValue) => T,
  ): Promise<T | undefined> {
    let id = ref;
    if (!ID_PATTERN.test(ref)) {
      if (!NAME_PATTERN.test(ref)) return undefined;
      const index = await this.store.get([`${kind}_name`, ref]);
      if (typeof index?.value !== "string") return undefined;
      id = index.value;
    }
    const entry = await this.store.get([kind, id]);
    if (entry === null) return undefined;
    return parse(entry.value);
  }

  async #delete(kind: Kind, record: Agent | Team): Promise<void> {
    const nameKey = [`${kind}_name`, record.name];
    const index = await this.store.get(nameKey);
    const mutations: { type: "delete"; key: StoreKey }[] = [
      { type: "delete", key: [kind, record.id] },
    ];
    // The name may already point at a newer record of the same name.
    if (index?.value === record.id) {
      mutations.push({ type: "delete", key: nameKey });
    }
    await this.store.commit({ mutations });
  }

  // ---- runs -------------------------------------------------------------------

  async saveRun(run: Run): Promise<void> {
    const running = run.status === "running";
    await this.store.commit({
      mutations: [
        { type: "set", key: ["run", run.id], value: toJson(run) },
        { type: "set", key: ["team_run", run.team_id, run.id], value: true },
        running
          ? { type: "set", key: ["active_run", run.id], value: true }
          : { type: "delete", key: ["active_run", run.id] },
      ],
    });
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

  /** Runs left `running` by a process that is gone become `interrupted`; returns how many. */
  async interruptActiveRuns(now: string): Promise<number> {
    let count = 0;
    let cursor: string | undefined;
    do {
      const page = await this.store.list(["active_run"], {
        limit: 100,
        cursor,
      });
      for (const entry of page.entries) {
        const id = String(entry.key.at(-1));
        const stored = await this.store.get(["run", id]);
        if (stored === null) {
          await this.store.delete(entry.key);
          continue;
        }
        const run = Run.parse(stored.value);
        if (run.status !== "running") {
          await this.store.delete(entry.key);
          continue;
        }
        await this.saveRun({
          ...run,
          status: "interrupted",
          stop_reason: "interrupted",
          error: {
            code: "interrupted",
            message:
              "The daemon stopped while this run was in progress; execute the task again to retry",
          },
          finished_at: now,
        });
        count++;
      }
      cursor = page.cursor ?? undefined;
    } while (cursor !== undefined);
    return count;
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
        throw new HttpError(
          400,
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

function notFound(label: string, ref: string, list: string): never {
  throw new HttpError(
    404,
    `${label} "${ref}" not found; GET ${list} lists them`,
    { id: ref },
  );
}

/** Records are zod outputs of JSON-safe schemas; this re-checks that at the seam. */
function toJson(value: unknown): JsonValue {
  return JSON.parse(JSON.stringify(value));
}
