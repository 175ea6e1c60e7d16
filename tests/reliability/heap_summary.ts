// Reads V8 heap snapshots (`InspectedDaemon.heapSnapshot`) and says what they
// hold: objects counted and sized by type and constructor, and what grew
// from one snapshot to the next. A tool for tracing the load soak's memory,
// not a test:
//
//   deno run -A tests/reliability/heap_summary.ts a.heapsnapshot b.heapsnapshot …
//   deno run -A tests/reliability/heap_summary.ts --retainers Name a.heapsnapshot

interface Meta {
  node_fields: string[];
  node_types: [string[], ...unknown[]];
  edge_fields: string[];
  edge_types: [string[], ...unknown[]];
}

interface Snapshot {
  snapshot: { meta: Meta };
  nodes: number[];
  edges: number[];
  strings: string[];
}

export interface Group {
  count: number;
  bytes: number;
}

/** A snapshot's nodes and edges, indexed for walking. */
export class Heap {
  readonly #s: Snapshot;
  readonly #nodeWidth: number;
  readonly #edgeWidth: number;
  /** Index of each node's first edge in `edges`. */
  readonly #firstEdge: Uint32Array;
  readonly nodeCount: number;

  constructor(text: string) {
    this.#s = JSON.parse(text);
    const meta = this.#s.snapshot.meta;
    this.#nodeWidth = meta.node_fields.length;
    this.#edgeWidth = meta.edge_fields.length;
    this.nodeCount = this.#s.nodes.length / this.#nodeWidth;
    this.#firstEdge = new Uint32Array(this.nodeCount + 1);
    const edgeCount = meta.node_fields.indexOf("edge_count");
    for (let n = 0, at = 0; n < this.nodeCount; n++) {
      this.#firstEdge[n] = at;
      at += this.#s.nodes[n * this.#nodeWidth + edgeCount] * this.#edgeWidth;
      this.#firstEdge[n + 1] = at;
    }
  }

  type(n: number): string {
    return this.#s.snapshot.meta
      .node_types[0][this.#s.nodes[n * this.#nodeWidth]];
  }

  name(n: number): string {
    return this.#s.strings[this.#s.nodes[n * this.#nodeWidth + 1]];
  }

  selfSize(n: number): number {
    return this.#s.nodes[n * this.#nodeWidth + 3];
  }

  /** `type:name`, names of strings and code cut short. */
  label(n: number): string {
    const type = this.type(n);
    const name = type === "string" || type === "concatenated string" ||
        type === "sliced string" || type === "code"
      ? ""
      : this.name(n).replace(/ @\d+$/, "").slice(0, 60);
    return `${type}:${name}`;
  }

  /** Edges of `n`: [edge type, edge name, target node]. */
  *edges(n: number): Generator<[string, string, number]> {
    const meta = this.#s.snapshot.meta;
    for (
      let e = this.#firstEdge[n];
      e < this.#firstEdge[n + 1];
      e += this.#edgeWidth
    ) {
      const type = meta.edge_types[0][this.#s.edges[e]];
      const raw = this.#s.edges[e + 1];
      const name = type === "element" || type === "hidden"
        ? String(raw)
        : this.#s.strings[raw];
      yield [type, name, this.#s.edges[e + 2] / this.#nodeWidth];
    }
  }

  groups(): Map<string, Group> {
    const out = new Map<string, Group>();
    for (let n = 0; n < this.nodeCount; n++) {
      const label = this.label(n);
      const group = out.get(label) ?? { count: 0, bytes: 0 };
      group.count++;
      group.bytes += this.selfSize(n);
      out.set(label, group);
    }
    return out;
  }

  /**
   * What the nodes labelled `label` hold: the objects, arrays and strings
   * reached from them through data edges (not through functions, shapes,
   * prototypes or weak edges), counted and sized once each. An upper bound of
   * their retained size, close for plain data.
   */
  reach(label: string): Group & { roots: number } {
    const seen = new Uint8Array(this.nodeCount);
    const stack: number[] = [];
    let roots = 0;
    for (let n = 0; n < this.nodeCount; n++) {
      if (this.label(n) === label) {
        roots++;
        seen[n] = 1;
        stack.push(n);
      }
    }
    let count = 0;
    let bytes = 0;
    while (stack.length > 0) {
      const n = stack.pop() ?? 0;
      count++;
      bytes += this.selfSize(n);
      for (const [type, name, to] of this.edges(n)) {
        if (
          seen[to] || type === "weak" || type === "shortcut" ||
          name === "__proto__" || name === "map" || name === "constructor" ||
          !DATA_TYPES.has(this.type(to))
        ) continue;
        seen[to] = 1;
        stack.push(to);
      }
    }
    return { roots, count, bytes };
  }

  /** For nodes labelled `label`: their retainers' labels and edge names, counted. */
  retainers(label: string): Map<string, number> {
    const out = new Map<string, number>();
    for (let n = 0; n < this.nodeCount; n++) {
      for (const [type, name, to] of this.edges(n)) {
        if (type === "weak" || this.label(to) !== label) continue;
        const key = `${this.label(n)} --${type === "element" ? "[]" : name}-->`;
        out.set(key, (out.get(key) ?? 0) + 1);
      }
    }
    return out;
  }
}

const MIB = 1024 * 1024;
const DATA_TYPES = new Set([
  "object",
  "array",
  "string",
  "concatenated string",
  "sliced string",
  "number",
  "regexp",
]);

function top<T>(entries: [string, T][], by: (value: T) => number, count = 40) {
  return entries.sort((a, b) => by(b[1]) - by(a[1])).slice(0, count);
}

if (import.meta.main) {
  const args = [...Deno.args];
  if (args[0] === "--reach") {
    const label = args[1];
    for (const path of args.slice(2)) {
      const { roots, count, bytes } = new Heap(await Deno.readTextFile(path))
        .reach(label);
      console.log(
        `${path}: ${roots} × ${label} hold ${count} nodes, ${
          (bytes / MIB).toFixed(2)
        } MiB`,
      );
    }
  } else if (args[0] === "--retainers") {
    const label = args[1];
    for (const path of args.slice(2)) {
      const heap = new Heap(await Deno.readTextFile(path));
      console.log(`${path}: retainers of ${label}`);
      for (
        const [key, count] of top([...heap.retainers(label)], (c) => c, 25)
      ) {
        console.log(`  ${String(count).padStart(8)}  ${key}`);
      }
    }
  } else {
    let before: Map<string, Group> | undefined;
    for (const path of args) {
      const groups = new Heap(await Deno.readTextFile(path)).groups();
      let total = 0;
      for (const group of groups.values()) total += group.bytes;
      console.log(`${path}: ${(total / MIB).toFixed(1)} MiB`);
      if (!before) {
        for (const [label, g] of top([...groups], (g) => g.bytes, 30)) {
          console.log(
            `  ${String(g.count).padStart(8)} ${
              (g.bytes / MIB).toFixed(2).padStart(8)
            } MiB  ${label}`,
          );
        }
      } else {
        const grown: [string, Group][] = [];
        for (const [label, g] of groups) {
          const was = before.get(label) ?? { count: 0, bytes: 0 };
          grown.push([label, {
            count: g.count - was.count,
            bytes: g.bytes - was.bytes,
          }]);
        }
        console.log("  grew by count:");
        for (const [label, g] of top(grown, (g) => g.count, 30)) {
          console.log(
            `  ${String(g.count).padStart(8)} ${
              (g.bytes / MIB).toFixed(2).padStart(8)
            } MiB  ${label}`,
          );
        }
        console.log("  grew by bytes:");
        for (const [label, g] of top(grown, (g) => g.bytes, 15)) {
          console.log(
            `  ${String(g.count).padStart(8)} ${
              (g.bytes / MIB).toFixed(2).padStart(8)
            } MiB  ${label}`,
          );
        }
      }
      before = groups;
    }
  }
}
