import type { ArgFieldSpec } from '../../core/arg-fields.js';
import { AMOUNT_DESCRIPTION, AMOUNT_EXAMPLES, AMOUNT_TEXT_PATTERN } from '../../core/money.js';
import type { Tool } from '../../providers/tool-registry.js';
import { jsonSchemaOf, type JsonSchema } from './json-schema.js';

/**
 * The JSON Schema of what the tool's canonicalizing schema accepts. Its input side loses what the
 * fields check after canonicalizing (trimmed, collapsed, lower-cased), so each field's declared
 * bounds, values and description are added back from the same declaration the schema is built from.
 */
export function toolArgsJsonSchema(tool: Tool): JsonSchema {
  const schema = jsonSchemaOf(tool.schema, 'input');
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  for (const [name, field] of Object.entries(tool.spec.args)) {
    const property = properties[name];
    if (property) Object.assign(property, declared(field, property));
  }
  return schema;
}

/** JSON Schema keywords for what a declared argument field checks once canonicalized. */
function declared(field: ArgFieldSpec, property: JsonSchema): JsonSchema {
  const described = field.description ? { description: field.description } : {};
  const fallback = 'default' in field && field.default !== undefined ? { default: field.default } : {};
  switch (field.type) {
    case 'string':
      return { ...described, ...fallback, ...defined({ minLength: field.minLength, maxLength: field.maxLength, pattern: field.pattern }) };
    case 'text':
      return { ...described, ...fallback, ...defined({ maxLength: field.maxLength }) };
    case 'email':
      return { ...described, ...fallback, format: 'email' };
    case 'currency':
      return { ...described, ...fallback, pattern: '^\\s*[A-Za-z]{3}\\s*$' };
    case 'enum':
      return { ...described, ...fallback, enum: field.values };
    case 'integer': {
      // A whole number, or its decimal text: the number branch carries the bounds.
      const anyOf = ((property.anyOf ?? []) as JsonSchema[]).map((branch) => (branch.type === 'number' ? { type: 'integer', ...defined({ minimum: field.min, maximum: field.max }) } : branch));
      return { ...described, ...fallback, ...(anyOf.length > 0 ? { anyOf } : {}) };
    }
    case 'money':
      // Any value reaches the object check, where it is read against its currency field.
      // The string branch's pattern and the examples agree with parseMinorUnits: a model copies what it reads here.
      return { anyOf: [{ type: 'integer', minimum: field.allowZero ? 0 : 1 }, { type: 'string', pattern: AMOUNT_TEXT_PATTERN }], description: `${field.description ? `${field.description}. ` : ''}An amount${field.allowZero ? '' : ' more than zero'}: ${AMOUNT_DESCRIPTION}.`, examples: [...AMOUNT_EXAMPLES] };
    case 'boolean':
      return { ...described, ...fallback };
    case 'map':
      return described;
  }
}

function defined(keywords: Record<string, unknown>): JsonSchema {
  return Object.fromEntries(Object.entries(keywords).filter(([, v]) => v !== undefined));
}
