// File tools inside the configured allowed roots only (deny by default);
// every call is audited with path, bytes and outcome, never the content.

import { z } from "zod";
import { toolDefiner } from "../kit/mod.ts";
import type { DesktopControl } from "./control.ts";

const tool = toolDefiner<DesktopControl>();

export const fileRead = tool({
  name: "file_read",
  title: "Read file",
  taskSupport: "optional",
  touches: [],
  argKinds: { path: "path" },
  relativeTo: (ctx) => ctx.files.relativeBase(),
  description:
    "Read a file inside the allowed roots (config allowed_roots; relative paths are taken from the first). " +
    "UTF-8 text comes back as text, anything else base64.",
  input: z.object({
    path: z.string().min(1).max(4096).describe("File to read"),
  }),
  output: z.object({
    path: z.string(),
    bytes: z.number().int(),
    encoding: z.enum(["utf-8", "base64"]),
    content: z.string(),
  }),
  annotations: { readOnlyHint: true },
  async handle(ctx, { path }, call) {
    const result = await ctx.fileOp(
      call,
      "read",
      path,
      () => ctx.files.read(path),
    );
    const meta = {
      path: result.path,
      bytes: result.bytes,
      encoding: result.encoding,
      content: result.content,
    };
    return {
      content: [{ type: "text", text: result.content }],
      structuredContent: meta,
    };
  },
});

export const fileWrite = tool({
  name: "file_write",
  title: "Write file",
  taskSupport: "optional",
  touches: ["files-write"],
  argKinds: { path: "path" },
  relativeTo: (ctx) => ctx.files.relativeBase(),
  description:
    "Write text to a file inside the allowed roots, replacing it whole and atomically (a reader sees the " +
    "old or the new content, never a part). The directory must exist.",
  input: z.object({
    path: z.string().min(1).max(4096).describe("File to write"),
    content: z.string().describe("The file's new content (UTF-8 text)"),
  }),
  output: z.object({
    path: z.string(),
    bytes: z.number().int(),
    created: z.boolean(),
  }),
  annotations: { destructiveHint: true },
  async handle(ctx, { path, content }, call) {
    const result = await ctx.fileOp(
      call,
      "write",
      path,
      () => ctx.files.write(path, content),
    );
    const meta = {
      path: result.path,
      bytes: result.bytes,
      created: result.created,
    };
    return {
      content: [{ type: "text", text: JSON.stringify(meta) }],
      structuredContent: meta,
    };
  },
});
