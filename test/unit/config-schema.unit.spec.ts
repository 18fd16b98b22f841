// The config file's JSON Schema is generated from the zod spec: the committed copy must be what the
// generator writes today, and a real JSON Schema validator must agree with effectd about real files.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { configSchemaText, CONFIG_SCHEMA_FILE } from '../../src/config/config-schema.js';
import { parseConfig } from '../../src/config/config-loader.js';
import { packageRoot } from '../../src/shared/package-root.js';

const read = (file: string) => readFileSync(join(packageRoot(), file), 'utf8');

describe('config/effectd.config.schema.json', () => {
  it('is exactly what the zod spec generates (regenerate: node bin/effectd.js config schema > config/effectd.config.schema.json)', () => {
    expect(read(CONFIG_SCHEMA_FILE)).toBe(configSchemaText());
  });

  const ajv = new Ajv2020({ allErrors: true, strict: false });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  const validate = ajv.compile(JSON.parse(read(CONFIG_SCHEMA_FILE)));

  for (const file of ['config/builtin-tools.json', 'examples/effectd.config.json']) {
    it(`accepts ${file}, as effectd does`, () => {
      const config = JSON.parse(read(file));
      expect(validate(config), JSON.stringify(validate.errors)).toBe(true);
      expect(() => parseConfig(config, file)).not.toThrow();
    });
  }

  it('refuses what effectd refuses, at the same field', () => {
    const example = JSON.parse(read('examples/effectd.config.json'));
    example.tools[0].idempotency.retentionMs = 'a day';
    expect(validate(example)).toBe(false);
    expect(validate.errors!.map((e) => e.instancePath)).toContain('/tools/0/idempotency/retentionMs');
    expect(() => parseConfig(example, 'example')).toThrow(/tool "crm.create-ticket", field "idempotency.retentionMs"/);
  });

  it('refuses a saga definition in JSON (sagas are code) and a typo at the top level', () => {
    expect(validate({ sagas: [{ name: 'x', steps: [] }] })).toBe(false);
    expect(validate({ tolls: [] })).toBe(false);
    expect(validate({ $schema: '../config/effectd.config.schema.json', builtinTools: true })).toBe(true);
  });
});
