// A deliberately broken build, switched on only by the fleet harness (`npm run fleet -- --sabotage <kind>`):
// each kind rewrites ONE line of one compiled dist/ file when Node loads it. src/ is never changed.
// The pattern must be found exactly once, or effectd refuses to start: a sabotage that silently
// stopped applying (dist/ rebuilt from changed code) would make a VALID verdict prove nothing.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../../..', import.meta.url)).replace(/\/$/, '');

export const SABOTAGE = {
  // src/shell/provider-checks.ts lookUp(): a lookup that did not find the effect is `pending` (the
  // provider's search may lag behind its writes). Broken: "not found" is taken as proof of absence,
  // so an effect whose reply was lost is settled not_done while the charge exists at the provider.
  'lookup-404-is-absence': {
    file: 'dist/src/shell/provider-checks.js',
    find: "if (result.kind !== 'found')\n        return { ...base, asked: result.asked, seen: result.seen, verdict: 'pending' };",
    replace: "if (result.kind !== 'found')\n        return { ...base, asked: result.asked, seen: result.seen, verdict: 'not_committed' };",
    expect: 'not-done-with-provider / duplicate-effect: a charge the provider made, answered not_done (and a new step charges again)',
  },
  // src/core/effect-state.ts effectStatus(): a claim is live until its lease runs out. Broken: the
  // lease is ignored (a claim counts as lapsed from the moment it is taken), so another instance
  // reconciles — and claims again — an effect whose dispatch is still in flight.
  'lease-ignored': {
    file: 'dist/src/core/effect-state.js',
    find: 'if (attempt && now >= attempt.started.leaseUntil)\n            return \'unknown\';',
    replace: 'if (attempt && now >= attempt.started.at)\n            return \'unknown\';',
    expect: 'two-live-claims: a second instance claims an effect while the first one\'s claim is live',
  },
};

/** The rewritten source, or an Error saying why the sabotage cannot apply (unknown kind, pattern not found once). */
export function sabotaged(kind, source) {
  const s = SABOTAGE[kind];
  if (!s) return new Error(`unknown sabotage "${kind}" (known: ${Object.keys(SABOTAGE).join(', ')})`);
  const count = source.split(s.find).length - 1;
  if (count !== 1) return new Error(`sabotage "${kind}": its pattern is found ${count} times in ${s.file} (expected once); dist/ no longer has the line it breaks — update test/fleet/sabotage/kinds.mjs from src/ and npm run build`);
  return source.replace(s.find, s.replace);
}

/** Checks the kind against the dist file on disk (the same text the loader will see). */
export function checkOnDisk(kind, repo = REPO) {
  const s = SABOTAGE[kind];
  if (!s) return new Error(`unknown sabotage "${kind}" (known: ${Object.keys(SABOTAGE).join(', ')})`);
  let source;
  try {
    source = readFileSync(`${repo}/${s.file}`, 'utf8');
  } catch (error) {
    return new Error(`sabotage "${kind}": cannot read ${s.file} (${error.code ?? error}); run npm run build`);
  }
  const out = sabotaged(kind, source);
  return out instanceof Error ? out : undefined;
}
