import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parseSse } from './contract/index.js';

/** The parts of an OpenAPI 3.1 document the checker reads. */
export interface OpenApiDocument {
  openapi: string;
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>
  >;
  components?: { schemas?: Record<string, object> };
}

// ajv-formats is CommonJS: its default export arrives as the module object under some loaders.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv2020,
) => Ajv2020;

/**
 * A checker of answers against the served OpenAPI document (issue 25 point 2): given the method, the route as Fastify
 * matched it (`/api/channels/:channel_id`), the status, content-type and raw body, the issues, one line each (none
 * when the document declares that route, that status and that content-type, and the body is valid against the
 * declared schema: JSON Schema 2020-12 with formats; every `data:` event of an event stream; a CSV body is not
 * parsed). Schemas are compiled once per operation, status and content-type.
 */
export const openApiChecker = (
  doc: OpenApiDocument,
): ((method: string, route: string, status: number, contentType: string, raw: string) => string[]) => {
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: false }));
  const compiled = new Map<string, ValidateFunction>();
  const validator = (key: string, schema: object) => {
    let v = compiled.get(key);
    // `#/components/...` refs resolve inside the compiled root, so the root carries the document's components.
    if (!v) {
      v = ajv.compile({ ...schema, components: doc.components ?? {} });
      compiled.set(key, v);
    }
    return v;
  };
  return (method, route, status, contentType, raw) => {
    const path = route.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
    const op = doc.paths[path]?.[method.toLowerCase()];
    if (!op) return [`${method} ${path} is not in the OpenAPI document`];
    const declared = op.responses[String(status)];
    if (!declared) return [`status ${status} is not declared (declared: ${Object.keys(op.responses).join(', ')})`];
    const content = declared.content ?? {};
    if (Object.keys(content).length === 0) return raw === '' ? [] : [`a body where the document declares none`];
    const type = contentType.split(';')[0]!.trim();
    const media = content[type];
    if (!media) return [`content-type ${type} is not declared (declared: ${Object.keys(content).join(', ')})`];
    if (type === 'text/csv' || type === 'text/html') return [];
    let values: unknown[];
    if (type === 'text/event-stream') {
      const { events, issues } = parseSse(raw);
      if (issues.length) return issues;
      values = events;
    } else {
      try {
        values = [JSON.parse(raw)];
      } catch {
        return [`the body is not JSON: ${raw.slice(0, 80)}`];
      }
    }
    const validate = validator(`${method} ${path} ${status} ${type}`, media.schema);
    return values.flatMap((value, i) =>
      validate(value)
        ? []
        : (validate.errors ?? []).map(
            (e) =>
              `${values.length > 1 ? `event ${i}: ` : ''}${e.instancePath || '/'} ${e.message} (${JSON.stringify(e.params)})`,
          ),
    );
  };
};
