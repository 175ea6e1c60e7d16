// zod → OpenAPI 3.1 pieces: JSON Schema 2020-12 from `z.toJSONSchema`, with
// named schemas (`.meta({ id })`) hoisted into `components.schemas` and
// referenced from there, and query schemas turned into parameters.

import { z } from "zod";
import { isRecord } from "../../platform/validation.ts";

type Json = Record<string, unknown>;

export class SchemaCatalog {
  readonly components: Record<string, Json> = {};

  /** The schema of a request (`io: "input"`: defaults make fields optional) or a response. */
  ref(schema: z.ZodType, io: "input" | "output"): Json {
    const converted = z.toJSONSchema(schema, {
      target: "draft-2020-12",
      io,
      unrepresentable: "any",
    });
    const { $defs, $schema: _schema, ...root } = converted;
    if (isRecord($defs)) {
      for (const [id, def] of Object.entries($defs)) {
        if (isRecord(def)) this.components[id] = clean(def);
      }
    }
    return clean(root);
  }

  /** Query parameters from an object schema. */
  parameters(schema: z.ZodObject): Json[] {
    const converted = this.ref(schema, "input");
    const properties = isRecord(converted.properties)
      ? converted.properties
      : {};
    const required = Array.isArray(converted.required)
      ? converted.required
      : [];
    return Object.entries(properties).map(([name, property]) => {
      const { description, ...rest } = isRecord(property) ? property : {};
      return {
        name,
        in: "query",
        required: required.includes(name),
        ...(typeof description === "string" ? { description } : {}),
        schema: rest,
      };
    });
  }
}

const SAFE_MIN = Number.MIN_SAFE_INTEGER;
const SAFE_MAX = Number.MAX_SAFE_INTEGER;

/** Rewrites `#/$defs/X` refs and drops the noise bounds zod puts on every integer. */
function clean(node: unknown): Json {
  const cleaned = cleanValue(node);
  return isRecord(cleaned) ? cleaned : {};
}

function cleanValue(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(cleanValue);
  if (!isRecord(node)) return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "$ref" && typeof value === "string") {
      out[key] = value.replace(/^#\/\$defs\//, "#/components/schemas/");
    } else if (
      (key === "minimum" && value === SAFE_MIN) ||
      (key === "maximum" && value === SAFE_MAX)
    ) {
      continue;
    } else {
      out[key] = cleanValue(value);
    }
  }
  return out;
}
