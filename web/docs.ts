// GET /docs: the OpenAPI document as one readable HTML page, rendered on the
// server from the same document as /v1/openapi.json: no scripts, no CDN, so
// it works offline and under a strict Content-Security-Policy.

import { Hono } from "hono";

type Json = Record<string, unknown>;

const CONCEPTS = `
<h2 id="concepts">Concepts</h2>
<dl>
<dt>Agent turn</dt><dd>One message to an agent. The model gets the system prompt, the
conversation so far (the agent's own, or <code>session_id</code>'s) and the message; tool calls go
through the MCP gateway bound to the agent's identity (its memory namespace is its name); results go
back to the model until it answers or a bound stops the turn. One <em>step</em> is one model call
plus the tool calls it asks for.</dd>
<dt><code>stop_reason</code></dt><dd><code>end_turn</code> answered; <code>max_steps</code> the step
bound (config <code>agents.max_steps</code>); <code>timeout</code> the turn timeout
(<code>agents.turn_timeout_ms</code>); <code>repeated_tool_call</code> the same tool with the same
arguments twice in a row; <code>max_tokens</code> the answer hit <code>max_tokens</code>;
<code>error</code> the turn failed (team steps only).</dd>
<dt>Streaming</dt><dd><code>stream: true</code> answers <code>text/event-stream</code>:
<code>text</code>, <code>tool_call_start</code>, <code>tool_call_waiting</code> (the call waits for a
person's approval), <code>tool_call_end</code>, then <code>done</code> with
the same body as the JSON reply, or <code>error</code>.</dd>
<dt>Teams</dt><dd>One <em>iteration</em> is one agent turn (a delegated turn and the supervisor's own
turn count one each). <code>sequential</code>: each agent once, in order, given the task, the context
and the previous agent's output. <code>round_robin</code>: the agents in turn until one calls
<code>team__complete</code> or writes <code>TASK_COMPLETE</code>. <code>supervisor</code>: the first
agent delegates with <code>team__delegate</code> {agent, task} and its answer is the output.
<code>max_iterations</code> stops a run with <code>stop_reason: "max_iterations"</code>.</dd>
<dt>Lists</dt><dd><code>{"data": [...], "next_cursor": …}</code>, oldest first;
<code>limit</code> 1–100 (20), <code>cursor</code> = the previous <code>next_cursor</code>.</dd>
<dt>Errors</dt><dd><code>{"error": {"code", "message", "details"}}</code> with 400, 404, 409, 413,
415, 502, 503 or 504.</dd>
</dl>`;

/** `document`: the OpenAPI document, loaded on the first request. */
export function docsRoutes(document: () => Promise<Json>): Hono {
  const app = new Hono();
  app.get("/", async (c) =>
    c.html(renderDocs(await document()), 200, {
      "content-security-policy":
        "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    }));
  return app;
}

export function renderDocs(doc: Json): string {
  const info = record(doc.info);
  const paths = record(doc.paths);
  const schemas = record(record(doc.components).schemas);
  const ops: { method: string; path: string; op: Json }[] = [];
  for (const [path, methods] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(record(methods))) {
      ops.push({ method, path, op: record(op) });
    }
  }
  const tags = Array.isArray(doc.tags) ? doc.tags.map(record) : [];
  const sections = tags.map((tag) => {
    const mine = ops.filter(({ op }) =>
      list(op.tags).includes(String(tag.name))
    );
    return `<h2 id="tag-${esc(tag.name)}">${esc(tag.name)}</h2><p>${
      esc(tag.description)
    }</p>` +
      mine.map((entry) => renderOperation(entry.method, entry.path, entry.op))
        .join("");
  }).join("");
  const toc = ops.map(({ method, path, op }) =>
    `<li><a href="#${anchor(method, path)}"><span class="m ${esc(method)}">${
      esc(method.toUpperCase())
    }</span> ${esc(path)}</a> — ${esc(op.summary)}</li>`
  ).join("");
  const models = Object.entries(schemas).map(([name, schema]) =>
    `<section id="schema-${esc(name)}"><h3>${esc(name)}</h3>${
      renderSchema(record(schema))
    }</section>`
  ).join("");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(info.title)} ${
    esc(info.version)
  }</title><style>${STYLE}</style></head><body>
<header><h1>${esc(info.title)} <small>${esc(info.version)}</small></h1>
<p>${esc(info.description)}</p>
<p>Machine-readable: <a href="/v1/openapi.json">/v1/openapi.json</a> (OpenAPI ${
    esc(doc.openapi)
  }).</p></header>
<nav><ul>${toc}</ul></nav>${CONCEPTS}${sections}<h2 id="schemas">Schemas</h2>${models}
</body></html>`;
}

function renderOperation(method: string, path: string, op: Json): string {
  const params = list(op.parameters).map(record);
  const paramRows = params.map((p) =>
    `<tr><td><code>${esc(p.name)}</code></td><td>${esc(p.in)}</td><td>${
      typeText(record(p.schema))
    }</td><td>${p.required ? "yes" : ""}</td><td>${
      esc(p.description)
    }</td></tr>`
  ).join("");
  const body =
    record(record(record(op.requestBody).content)["application/json"]).schema;
  const responses = Object.entries(record(op.responses)).map(
    ([status, value]) => {
      const response = record(value);
      const content = record(response.content);
      const types = Object.keys(content).map((type) => {
        const schema = record(record(content[type]).schema);
        return `<code>${esc(type)}</code> ${
          schema.$ref ? typeText(schema) : ""
        }`;
      }).join(", ");
      return `<tr><td>${esc(status)}</td><td>${
        esc(response.description)
      }</td><td>${types}</td></tr>`;
    },
  ).join("");
  return `<section class="op" id="${anchor(method, path)}">
<h3><span class="m ${esc(method)}">${esc(method.toUpperCase())}</span> <code>${
    esc(path)
  }</code></h3>
<p><strong>${esc(op.summary)}</strong></p>${
    op.description ? `<p>${esc(op.description)}</p>` : ""
  }
${
    params.length > 0
      ? `<h4>Parameters</h4><table><tr><th>name</th><th>in</th><th>type</th><th>required</th><th>description</th></tr>${paramRows}</table>`
      : ""
  }
${body ? `<h4>Request body</h4>${renderSchema(record(body))}` : ""}
<h4>Responses</h4><table><tr><th>status</th><th>meaning</th><th>body</th></tr>${responses}</table>
</section>`;
}

function renderSchema(schema: Json): string {
  if (schema.$ref) return `<p>${typeText(schema)}</p>`;
  const properties = record(schema.properties);
  const names = Object.keys(properties);
  const note = schema.description ? `<p>${esc(schema.description)}</p>` : "";
  if (names.length === 0) return `${note}<p>${typeText(schema)}</p>`;
  const required = list(schema.required);
  const rows = names.map((name) => {
    const property = record(properties[name]);
    return `<tr><td><code>${esc(name)}</code></td><td>${
      typeText(property)
    }</td><td>${required.includes(name) ? "yes" : ""}</td><td>${
      esc(property.description)
    }${constraints(property)}</td></tr>`;
  }).join("");
  const extra = schema.additionalProperties === false
    ? "<p>Other fields are rejected.</p>"
    : "";
  return `${note}<table><tr><th>field</th><th>type</th><th>required</th><th>description</th></tr>${rows}</table>${extra}`;
}

function typeText(schema: Json): string {
  if (typeof schema.$ref === "string") {
    const name = schema.$ref.split("/").at(-1) ?? "";
    return `<a href="#schema-${esc(name)}">${esc(name)}</a>`;
  }
  if (Array.isArray(schema.anyOf)) {
    return schema.anyOf.map((s) => typeText(record(s))).join(" | ");
  }
  if (Array.isArray(schema.enum)) {
    return schema.enum.map((v) => `<code>${esc(JSON.stringify(v))}</code>`)
      .join(" | ");
  }
  if (schema.const !== undefined) {
    return `<code>${esc(JSON.stringify(schema.const))}</code>`;
  }
  if (schema.type === "array") {
    return `array of ${typeText(record(schema.items))}`;
  }
  if (
    schema.type === "object" && schema.additionalProperties &&
    !schema.properties
  ) {
    return `map of ${typeText(record(schema.additionalProperties))}`;
  }
  return esc(
    Array.isArray(schema.type) ? schema.type.join(" | ") : schema.type ?? "any",
  );
}

function constraints(schema: Json): string {
  const parts: string[] = [];
  if (schema.default !== undefined) {
    parts.push(`default ${JSON.stringify(schema.default)}`);
  }
  if (schema.minimum !== undefined) parts.push(`≥ ${schema.minimum}`);
  if (schema.maximum !== undefined) parts.push(`≤ ${schema.maximum}`);
  if (schema.minLength !== undefined) {
    parts.push(`min length ${schema.minLength}`);
  }
  if (schema.maxLength !== undefined) {
    parts.push(`max length ${schema.maxLength}`);
  }
  if (schema.minItems !== undefined) parts.push(`min items ${schema.minItems}`);
  if (schema.maxItems !== undefined) parts.push(`max items ${schema.maxItems}`);
  if (schema.pattern !== undefined) parts.push(`pattern ${schema.pattern}`);
  return parts.length > 0
    ? ` <span class="c">(${esc(parts.join(", "))})</span>`
    : "";
}

function anchor(method: string, path: string): string {
  return `${method}-${path.replace(/[^a-zA-Z0-9]+/g, "-")}`;
}

function record(value: unknown): Json {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? Object.fromEntries(Object.entries(value))
    : {};
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function esc(value: unknown): string {
  if (value === undefined || value === null) return "";
  return String(value).replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

const STYLE = `
body{font:15px/1.5 system-ui,sans-serif;max-width:70rem;margin:0 auto;padding:1rem 2rem;color:#1d1d1f}
h1 small{font-weight:normal;color:#666;font-size:.6em}
h2{border-bottom:1px solid #ddd;padding-bottom:.2rem;margin-top:2.5rem;text-transform:capitalize}
h2#concepts,h2#schemas{text-transform:none}
.op{border:1px solid #e3e3e3;border-radius:6px;padding:.2rem 1rem;margin:1rem 0}
.m{display:inline-block;min-width:4.2rem;text-align:center;border-radius:4px;color:#fff;font-size:.8em;padding:.1rem .3rem}
.get{background:#2b7bb9}.post{background:#2f9e44}.delete{background:#c92a2a}
table{border-collapse:collapse;width:100%;margin:.5rem 0}
td,th{border:1px solid #e3e3e3;padding:.3rem .5rem;text-align:left;vertical-align:top}
th{background:#f6f6f6}code{background:#f3f3f3;padding:0 .2rem;border-radius:3px}
nav ul{columns:2;list-style:none;padding:0}nav li{margin:.15rem 0}a{color:#1864ab;text-decoration:none}
.c{color:#666;font-size:.9em}dt{font-weight:bold;margin-top:.6rem}
`;
