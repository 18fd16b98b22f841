import { z } from 'zod';
import type { SagaDefinition } from '../../core/saga/saga-definition.js';
import type { SagaRegistry } from '../../shell/saga-registry.js';
import { jsonSchemaOf, type JsonSchema } from './json-schema.js';

/** `GET /v1/sagas/definitions`: every registered saga, its steps and compensations, and the JSON Schema of its input. */

const reversibility = z.enum(['read', 'idempotent', 'compensable', 'irreversible']);

const sagaStepViewSchema = z.object({
  name: z.string(),
  tool: z.string(),
  reversibility,
  irreversible: z.boolean().meta({ description: 'The step cannot be undone: it runs only once every compensable step has committed.' }),
  compensation: z.object({
    name: z.string(),
    tool: z.string(),
    reversibility: reversibility.exclude(['read']),
    irreversibleBecause: z.string().optional().meta({ description: 'Why a one-way undo is acceptable, for an irreversible compensation.' }),
  }).optional().meta({ description: 'The undo of a compensable step, run in reverse order when a later step fails for good.' }),
});

export const sagaDefinitionViewSchema = z.object({
  name: z.string(),
  version: z.number().int(),
  description: z.string(),
  steps: z.array(sagaStepViewSchema),
  inputSchema: z.looseObject({}).meta({ description: 'JSON Schema (2020-12) of the saga\'s input (`input` of POST /v1/sagas, `args` of `tool: "saga:<name>"`).' }),
}).meta({ description: 'A saga: its steps in order, each step\'s compensation, and its input.' });

export const sagaCatalogSchema = z.object({
  sagas: z.array(sagaDefinitionViewSchema),
  unavailable: z.array(z.object({ name: z.string(), why: z.string() })).meta({ description: 'Sagas set aside at start, with why (e.g. a tool that is not configured).' }),
});

export function sagaCatalog(sagas: SagaRegistry): z.infer<typeof sagaCatalogSchema> {
  return {
    sagas: sagas.names().map((name) => sagaView(sagas.get(name)!)),
    unavailable: sagas.notAvailable().map(([name, why]) => ({ name, why })),
  };
}

function sagaView(saga: SagaDefinition<unknown>): z.infer<typeof sagaDefinitionViewSchema> {
  return {
    name: saga.name,
    version: saga.version,
    description: saga.description,
    steps: saga.steps.map((step) => ({
      name: step.name,
      tool: step.tool,
      reversibility: step.reversibility,
      irreversible: step.reversibility === 'irreversible',
      ...(step.compensation ? {
        compensation: {
          name: step.compensation.name,
          tool: step.compensation.tool,
          reversibility: step.compensation.reversibility,
          ...(step.compensation.irreversibleBecause ? { irreversibleBecause: step.compensation.irreversibleBecause } : {}),
        },
      } : {}),
    })),
    inputSchema: sagaInputJsonSchema(saga),
  };
}

/** A saga from a user's project may bring a schema JSON Schema cannot express (or another zod's): say so rather than fail the catalog. */
export function sagaInputJsonSchema(saga: SagaDefinition<unknown>): JsonSchema {
  try {
    return jsonSchemaOf(saga.input as z.ZodType, 'input');
  } catch (error) {
    return { description: `the input schema of saga "${saga.name}" cannot be written as JSON Schema (${(error as Error).message}); effectd still validates it` };
  }
}
