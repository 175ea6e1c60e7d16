// The gateway's discovered upstreams: discover_servers' probes, and the
// auto-discovery rounds that add what is found and drop what is gone (never
// stored: each daemon discovers for itself). Apart from gateway.ts, which
// owns every upstream and the catalog they make.

import type { Logger } from "../../platform/log.ts";
import type { JsonValue, Store } from "../../platform/store/mod.ts";
import { ToolError } from "../kit/mod.ts";
import {
  applyDiscovered,
  autoCandidates,
  AutoDiscovery,
  autoNetworks,
} from "./auto_discovery.ts";
import type { DiscoveryConfig } from "./config.ts";
import { discoverServers } from "./discovery.ts";
import { httpTarget } from "./registrations.ts";
import type { Upstream, UpstreamSource, UpstreamTarget } from "./upstream.ts";

/** Where daemons announce themselves, who we are, and our own /mcp (never discovered as "other"). */
export interface DiscoverySetup {
  store: Store;
  instance: string;
  selfUrl(): string | undefined;
}

export interface DiscoveredUpstreamsOptions {
  config: DiscoveryConfig;
  discovery: DiscoverySetup | undefined;
  /** The gateway's upstreams, which discovered ones join and leave. */
  upstreams: Map<string, Upstream>;
  /** `name` is served or being registered: not taken by a discovered one. */
  taken(name: string): boolean;
  newUpstream(
    name: string,
    group: string,
    source: UpstreamSource,
    target: UpstreamTarget,
  ): Upstream;
  /** The upstreams changed: a new catalog. */
  rebuild(): void;
  stopping(): boolean;
  log: Logger;
  fetchFn?: typeof fetch;
}

export class DiscoveredUpstreams {
  readonly #options: DiscoveredUpstreamsOptions;
  #autoDiscovery: AutoDiscovery | undefined;

  constructor(options: DiscoveredUpstreamsOptions) {
    this.#options = options;
  }

  /** Auto-discovery rounds from now on, when `auto_register` names a source. */
  start(): void {
    const config = this.#options.config;
    if (autoNetworks(config).length > 0) {
      this.#autoDiscovery = new AutoDiscovery({
        intervalMs: config.interval_ms,
        listening: () => this.#options.discovery?.selfUrl() !== undefined,
        round: () => this.autoDiscover(),
        log: this.#options.log,
      });
      this.#autoDiscovery.start();
    }
  }

  /** `discover_servers`: probes what the config names and what daemons announced; registers nothing. */
  async discover(network?: string): Promise<{ [key: string]: JsonValue }> {
    const discovery = this.#options.discovery;
    if (!discovery) throw new ToolError("Discovery is not set up here.");
    return await discoverServers({
      config: this.#options.config,
      store: discovery.store,
      instance: discovery.instance,
      selfUrl: () => discovery.selfUrl(),
      upstreams: this.#options.upstreams,
      network,
      fetchFn: this.#options.fetchFn,
    });
  }

  /**
   * One auto-discovery round (auto_discovery.ts): what is found and not yet
   * served is added as a `discovered` upstream; discovered ones no longer
   * found leave. Never stored: each daemon discovers for itself.
   */
  async autoDiscover(): Promise<void> {
    const discovery = this.#options.discovery;
    if (!discovery || this.#options.stopping()) return;
    const candidates = await autoCandidates({
      networks: autoNetworks(this.#options.config),
      config: this.#options.config,
      store: discovery.store,
      instance: discovery.instance,
      fetchFn: this.#options.fetchFn,
    });
    if (this.#options.stopping()) return;
    const changed = await applyDiscovered(candidates, {
      self: discovery.selfUrl(),
      upstreams: this.#options.upstreams,
      taken: (name) => this.#options.taken(name),
      create: (name, url) =>
        this.#options.newUpstream(name, name, "discovered", httpTarget(url)),
      log: this.#options.log,
    });
    if (changed) this.#options.rebuild();
  }

  /** No more rounds; resolves when a running one has ended. */
  async stop(): Promise<void> {
    await this.#autoDiscovery?.stop();
  }
}
