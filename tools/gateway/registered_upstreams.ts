// The gateway's registered upstreams: opened from the store at start, added
// and removed by register_server and unregister_server, and kept in step with
// what other daemons sharing the store register or remove. Apart from
// gateway.ts, which owns every upstream and the catalog they make.

import { messageOf } from "../../platform/errors.ts";
import type { Logger } from "../../platform/log.ts";
import type { Store } from "../../platform/store/mod.ts";
import { VersionReader } from "../../platform/store/version.ts";
import { ToolError } from "../kit/mod.ts";
import {
  credentialHeaders,
  hideFromLogs,
  sealCredentials,
  storedCredentials,
} from "./credentials.ts";
import {
  addRegistration,
  groupMember,
  httpTarget,
  registeredUpstream,
  type Registration,
  REGISTRATIONS_VERSION,
  removeRegistration,
  storedRegistrations,
} from "./registrations.ts";
import type { Upstream, UpstreamSource, UpstreamTarget } from "./upstream.ts";

export interface RegisteredUpstreamsOptions {
  store: Store;
  /** The gateway's upstreams, which registered ones join and leave. */
  upstreams: Map<string, Upstream>;
  log: Logger;
  clock: () => number;
  /** `dns_timeout_ms`, for register_server's link-local check. */
  dnsTimeoutMs: number;
  secretKey(): Promise<CryptoKey>;
  newUpstream(
    name: string,
    group: string,
    source: UpstreamSource,
    target: UpstreamTarget,
    tools?: readonly string[],
  ): Upstream;
  /** The upstreams changed: a new catalog. */
  rebuild(): void;
  stopping(): boolean;
}

export class RegisteredUpstreams {
  readonly #options: RegisteredUpstreamsOptions;
  readonly #log: Logger;
  readonly #upstreams: Map<string, Upstream>;
  /** The registrations version this view reflects (undefined: re-read). */
  #seenVersion: string | null | undefined;
  readonly #registrationsVersion: VersionReader;
  #reconciling: Promise<void> | undefined;
  /** Names being registered now: the health round must not add them from the store too. */
  readonly #registering = new Set<string>();
  /** Stored registrations skipped for a group's name, said once each. */
  readonly #skippedRegistrations = new Set<string>();

  constructor(options: RegisteredUpstreamsOptions) {
    this.#options = options;
    this.#log = options.log;
    this.#upstreams = options.upstreams;
    this.#registrationsVersion = new VersionReader(options.store, [
      ...REGISTRATIONS_VERSION,
    ]);
  }

  /** Start: the stored registrations not named like an upstream or group already served. */
  async open(): Promise<void> {
    for (const registration of await storedRegistrations(this.#options.store)) {
      if (this.#upstreams.has(registration.name)) continue;
      if (this.#namedLikeGroup(registration.name)) continue;
      const upstream = await this.#stored(registration);
      this.#upstreams.set(upstream.name, upstream);
    }
  }

  /** `name` is being registered right now. */
  registering(name: string): boolean {
    return this.#registering.has(name);
  }

  /** A registered server (its own replica group, over HTTP), neither connected nor added. */
  #registered(
    registration: {
      name: string;
      url: string;
      tools: readonly string[] | null | undefined;
    },
    headers: Readonly<Record<string, string>> = {},
  ): Upstream {
    hideFromLogs(this.#log, headers);
    return this.#options.newUpstream(
      registration.name,
      registration.name,
      "registered",
      httpTarget(registration.url, headers),
      registration.tools ?? undefined,
    );
  }

  /** A stored registration with its credentials opened; without them when they cannot be (it then fails its checks). */
  async #stored(registration: Registration): Promise<Upstream> {
    const headers = await storedCredentials(registration, {
      secretKey: this.#options.secretKey,
      log: this.#log,
    });
    return this.#registered(registration, headers);
  }

  /**
   * When the stored registrations changed (another daemon on a shared store
   * registered or removed one), reconcile first, so the change is seen on the
   * very next request. One get of the registrations' version key per
   * request, shared by requests in flight together.
   */
  async refresh(): Promise<void> {
    let version: string | null;
    try {
      version = await this.#registrationsVersion.read();
    } catch {
      return; // the store is away: serve what is known
    }
    if (version === this.#seenVersion) return;
    await this.reconcile();
    this.#seenVersion = version;
  }

  /**
   * Registrations made or removed by other daemons sharing the store. One at
   * a time (refreshes and the health round), each after the one in flight:
   * that one may have read the store before the change its caller saw.
   */
  reconcile(): Promise<void> {
    const run = (this.#reconciling ?? Promise.resolve()).then(() =>
      this.#reconcile()
    );
    this.#reconciling = run;
    const settle = () => {
      if (this.#reconciling === run) this.#reconciling = undefined;
    };
    run.then(settle, settle);
    return run;
  }

  async #reconcile(): Promise<void> {
    let stored: Registration[];
    try {
      stored = await storedRegistrations(this.#options.store);
    } catch (error) {
      this.#log.warn("registrations_unreadable", { error: messageOf(error) });
      return;
    }
    const names = new Set(stored.map((registration) => registration.name));
    for (const upstream of [...this.#upstreams.values()]) {
      if (upstream.source === "registered" && !names.has(upstream.name)) {
        this.#upstreams.delete(upstream.name);
        await upstream.close();
        this.#log.info("unregistered", {
          upstream: upstream.name,
          by: "another daemon",
        });
      }
    }
    const added: Upstream[] = [];
    for (const registration of stored) {
      if (
        this.#upstreams.has(registration.name) ||
        this.#namedLikeGroup(registration.name) ||
        this.#registering.has(registration.name)
      ) continue;
      const upstream = await this.#stored(registration);
      this.#upstreams.set(upstream.name, upstream);
      added.push(upstream);
    }
    // Together: each is bounded by its own deadlines (connect_timeout_ms, ...).
    await Promise.all(
      added.map((upstream) => upstream.connect().catch(() => {})),
    );
    this.#options.rebuild();
  }

  /**
   * A stored registration named like a group of this daemon's config would
   * join that group as a replica: it is skipped (and said once per name).
   */
  #namedLikeGroup(name: string): boolean {
    if (groupMember(this.#upstreams, name) === undefined) return false;
    if (!this.#skippedRegistrations.has(name)) {
      this.#skippedRegistrations.add(name);
      this.#log.warn("registration_skipped", {
        upstream: name,
        reason: "a group of this daemon's config has that name",
      });
    }
    return true;
  }

  /** `register_server`: addRegistration checks, connects and saves (credentials sealed); then the tools are listed. */
  async register(
    name: string,
    url: string,
    tools: readonly string[] | undefined,
    credentials: {
      token?: string;
      headers?: Readonly<Record<string, string>>;
    } = {},
  ): Promise<Upstream> {
    const headers = credentialHeaders(credentials.token, credentials.headers);
    hideFromLogs(this.#log, headers);
    if (this.#registering.has(name)) {
      throw new ToolError(
        `"${name}" is being registered by another call right now.`,
      );
    }
    this.#registering.add(name);
    let added;
    try {
      added = await addRegistration(
        { name, url, tools, headers },
        {
          store: this.#options.store,
          upstreams: this.#upstreams,
          clock: this.#options.clock,
          dnsTimeoutMs: this.#options.dnsTimeoutMs,
          newUpstream: (as, href, only, sent) =>
            this.#registered({ name: as, url: href, tools: only }, sent),
          seal: async (as, sent) =>
            await sealCredentials(await this.#options.secretKey(), as, sent),
        },
      );
    } finally {
      this.#registering.delete(name);
    }
    const { upstream, registration } = added;
    if (this.#options.stopping()) {
      await upstream.close();
      throw new ToolError("The gateway is shutting down.");
    }
    this.#upstreams.set(name, upstream);
    this.#seenVersion = undefined; // this view changed apart from refresh()
    this.#log.info("registered", { upstream: name, url: registration.url });
    this.#options.rebuild();
    return upstream;
  }

  async unregister(name: string): Promise<void> {
    const upstream = registeredUpstream(this.#upstreams, name);
    await removeRegistration(this.#options.store, name);
    this.#upstreams.delete(name);
    this.#seenVersion = undefined; // this view changed apart from refresh()
    await upstream.close();
    this.#log.info("unregistered", { upstream: name });
    this.#options.rebuild();
  }
}
