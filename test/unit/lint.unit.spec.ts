// The lint (eslint.config.mjs: the layers of src/, no import cycles, no floating promises, coded
// errors only; the workspaces' boundaries) as one test of `npm test`: any finding fails it, listed one per line as `npm run lint`
// would. Type-aware rules read all of src/, so this takes tens of seconds on two cores.
import { relative } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/shared/package-root.js';

describe('npm run lint', () => {
  it('finds nothing in src/ nor in the workspaces\' sources (packages/)', async () => {
    const root = packageRoot();
    const eslint = new ESLint({ cwd: root, cache: false });
    const results = await eslint.lintFiles(['src', 'packages']);
    const findings = results.flatMap((result) =>
      result.messages.map((m) => `${relative(root, result.filePath)}:${m.line}:${m.column}  ${m.ruleId ?? (m.fatal ? 'parse error' : 'eslint')}  ${m.message}`),
    );
    expect(results.length, 'ESLint linted no file: is the src/ pattern or the ignores of eslint.config.mjs wrong?').toBeGreaterThan(100);
    expect(findings.length, `${findings.length} lint finding(s); \`npm run lint\` lists the same:\n${findings.join('\n')}\n`).toBe(0);
  }, 240_000);
});
