import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/effectd-harness.js';

const GENERATED = 'src/transport/wire/effectd/v1/effectd_pb.ts';

describe('proto/ is the one source of truth for the wire types', () => {
  it('the committed TypeScript equals what `npm run proto:gen` generates now', () => {
    const out = join(tempDir('effectd-proto-'), 'proto');
    // buf.gen.yaml writes to ../src/transport/wire relative to its output base.
    // protoc-gen-es is not a dev dependency (it declares node >=22, and only code generation needs it): npx
    // brings it at the version of `npm run proto:gen` (from npm's cache when it has been fetched once).
    execFileSync('npx', ['--yes', '--prefer-offline', '-p', '@bufbuild/protoc-gen-es@2.17.0', '-p', '@bufbuild/buf@1.75.0', '--', 'buf', 'generate', '--template', 'buf.gen.yaml', '--output', out], { cwd: 'proto', stdio: 'pipe' });
    const fresh = readFileSync(join(out, '..', GENERATED), 'utf8');
    expect(readFileSync(GENERATED, 'utf8'), 'run `npm run proto:gen` and commit the result').toBe(fresh);
  }, 30_000);

  it('the schema passes buf lint', () => {
    expect(() => execFileSync('npx', ['buf', 'lint'], { cwd: 'proto', stdio: 'pipe' })).not.toThrow();
  }, 30_000);
});
