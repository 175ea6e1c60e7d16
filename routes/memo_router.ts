// Hono's default router, with the match of each (method, path) kept: the
// daemon's routes are fixed once it serves, so a path matches the same
// handlers every time. The daemon's routes make Hono fall back from its
// RegExpRouter to the TrieRouter (POST /v1/a2a/message beside
// /v1/a2a/:agent), which walks the trie on every request.

import type { Result, Router } from "hono/router";
import { RegExpRouter } from "hono/router/reg-exp-router";
import { SmartRouter } from "hono/router/smart-router";
import { TrieRouter } from "hono/router/trie-router";

/** Matches kept at most (cleared when full: paths are the client's). */
const MAX_MATCHES = 512;
/** Longer paths are matched each time, not kept. */
const MAX_PATH_CHARS = 256;

export class MemoRouter<T> implements Router<T> {
  readonly #router: Router<T> = new SmartRouter<T>({
    routers: [new RegExpRouter(), new TrieRouter()],
  });
  /** Method -> path -> match. */
  readonly #matches = new Map<string, Map<string, Result<T>>>();
  #kept = 0;

  /** How many matches are kept now. */
  get size(): number {
    return this.#kept;
  }

  get name(): string {
    return `MemoRouter + ${this.#router.name}`;
  }

  add(method: string, path: string, handler: T): void {
    this.#forget();
    this.#router.add(method, path, handler);
  }

  match(method: string, path: string): Result<T> {
    if (path.length > MAX_PATH_CHARS) return this.#router.match(method, path);
    const known = this.#matches.get(method)?.get(path);
    if (known !== undefined) return known;
    const result = this.#router.match(method, path);
    if (this.#kept >= MAX_MATCHES) this.#forget();
    let paths = this.#matches.get(method);
    if (paths === undefined) {
      paths = new Map();
      this.#matches.set(method, paths);
    }
    paths.set(path, result);
    this.#kept++;
    return result;
  }

  #forget(): void {
    this.#matches.clear();
    this.#kept = 0;
  }
}
