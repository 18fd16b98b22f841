// The module hook of hook.mjs: rewrites the sabotaged file's source as it is loaded.
import { SABOTAGE, sabotaged } from './kinds.mjs';

let kind;
let suffix;
export function initialize(data) {
  kind = data.kind;
  suffix = `/${SABOTAGE[kind].file}`;
}

export async function load(url, context, nextLoad) {
  const result = await nextLoad(url, context);
  if (!url.startsWith('file:') || !url.endsWith(suffix)) return result;
  const out = sabotaged(kind, String(result.source));
  // checked at start already; a file changed since then must not load unbroken
  if (out instanceof Error) throw out;
  return { ...result, source: out };
}
