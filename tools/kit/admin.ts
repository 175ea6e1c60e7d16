// What a server shows on `/admin`: plain JSON (the same data programs read
// from `/admin` as JSON) that web/admin.ts renders generically as HTML.

import type { JsonValue } from "../../platform/store/mod.ts";

/** How `/admin` shows one value; plain text when not given. */
export type AdminFormat =
  /** Monospace (URLs, commands, names to copy). */
  | "code"
  /** A count, grouped by thousands; null shows a dash. */
  | "number"
  /** Milliseconds, shown in ms or s. */
  | "duration"
  /** A fraction shown as a percentage. */
  | "percent"
  /** An ISO time, shown as a clock time on the page's day. */
  | "time"
  /** An identifier with `_` shown as spaces (`least_in_flight`). */
  | "words"
  /** A state word, coloured; it also marks the row (`data-state`). */
  | "state"
  /** An error message, in red; null shows nothing. */
  | "error"
  /** A boolean shown as a badge named by the column, only when true. */
  | "flag"
  /** A number shown as is (a pid, a port). */
  | "id"
  | "text";

/** One labelled fact in a section's header. */
export type AdminField = {
  key: string;
  label: string;
  value: JsonValue;
  format?: AdminFormat;
};

export type AdminColumn = {
  /** The row property shown in this column. */
  key: string;
  label: string;
  format?: AdminFormat;
};

export type AdminTable = {
  /** The table's HTML id; unique on the page (prefix it with the server id when in doubt). */
  id: string;
  title: string;
  /** Each row is marked `data-<row_attribute>="<row[row_key]>"` for scripts and tests. */
  row_attribute: string;
  row_key: string;
  columns: AdminColumn[];
  /** Plain objects: the same data programs read from `/admin` as JSON. */
  rows: { [key: string]: JsonValue }[];
  /** Shown when there are no rows. */
  empty: string;
};

/** A server's part of `/admin`: JSON as is, rendered generically as HTML. */
export type AdminSection = {
  title: string;
  fields: AdminField[];
  tables: AdminTable[];
};
