// Element refs handed out by `snapshot`: `s<snapshot>e<n>`, valid only for
// the latest snapshot of their tab and only until that tab's main frame
// navigates; anything else is refused with the reason.

import type { ElementHandle, Page } from "../../platform/puppeteer.ts";
import { ToolError } from "../kit/mod.ts";

/** A node of the accessibility tree that can find its element again. */
export interface RefTarget {
  elementHandle(): Promise<ElementHandle | null>;
}

export interface TabSnapshots {
  /** Number of the latest snapshot of the tab (0: none yet). */
  latest: number;
  refs: Map<string, RefTarget>;
  /** Set when the main frame navigated after the latest snapshot. */
  navigatedTo: string | undefined;
  /** The latest snapshot's lines without refs, for diffs. */
  lines: string[];
}

const REF = /^(?:ref=)?(s(\d+)e\d+)$/;
const tabs = new WeakMap<Page, TabSnapshots>();

/** Whether `selector` is written as a snapshot ref (`ref=s3e12` or `s3e12`). */
export function isRef(selector: string): boolean {
  return REF.test(selector.trim());
}

/** The tab's snapshot state, watching its navigations from the first use on. */
export function snapshotsOf(page: Page): TabSnapshots {
  let state = tabs.get(page);
  if (!state) {
    const created: TabSnapshots = {
      latest: 0,
      refs: new Map(),
      navigatedTo: undefined,
      lines: [],
    };
    page.on("framenavigated", (frame) => {
      if (frame !== page.mainFrame() || created.latest === 0) return;
      created.navigatedTo = frame.url();
      created.refs.clear();
    });
    tabs.set(page, created);
    state = created;
  }
  return state;
}

/** The element a ref names, or a ToolError saying why the ref is not valid. */
export async function resolveRef(
  page: Page,
  selector: string,
): Promise<ElementHandle> {
  const match = selector.trim().match(REF);
  if (!match) throw new ToolError(`"${selector}" is not a snapshot ref`);
  const [, ref, number] = match;
  const state = snapshotsOf(page);
  if (state.latest === 0) {
    throw new ToolError(
      `Ref ${ref}: no snapshot was taken in this tab; call snapshot first`,
    );
  }
  if (state.navigatedTo !== undefined) {
    throw new ToolError(
      `Ref ${ref} is stale: the page navigated to ${state.navigatedTo} after snapshot ${state.latest}; take a new snapshot`,
    );
  }
  if (Number(number) !== state.latest) {
    throw new ToolError(
      `Ref ${ref} is stale: it is from snapshot ${number}, the latest is ${state.latest}; use refs of the latest snapshot`,
    );
  }
  const target = state.refs.get(ref);
  if (!target) {
    throw new ToolError(
      `Ref ${ref} is not in snapshot ${state.latest}; take a new snapshot`,
    );
  }
  const element = await target.elementHandle().catch(() => null);
  if (!element) {
    throw new ToolError(
      `Ref ${ref}: its element is no longer in the page; take a new snapshot`,
    );
  }
  return element;
}
