type FormValue = string | FormValue[] | { [key: string]: FormValue };
type FormObject = { [key: string]: FormValue };

/**
 * Parses Stripe-style urlencoded bodies: `metadata[k]=v`, `a[b][c]=v`, `to[]=x`, `items[0][id]=x`.
 * Objects whose keys are all array indices become arrays.
 */
export function parseFormBody(text: string): FormObject {
  const root: FormObject = {};
  for (const [name, value] of new URLSearchParams(text)) {
    const path = splitName(name);
    if (path === undefined) throw new SyntaxError(`Invalid parameter name: ${name}`);
    assign(root, path, value);
  }
  return indexObjectsToArrays(root) as FormObject;
}

function splitName(name: string): string[] | undefined {
  const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(name);
  if (match === null) return undefined;
  const rest = [...match[2].matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1]);
  return [match[1], ...rest];
}

function assign(target: FormObject, path: string[], value: string): void {
  let node: FormObject = target;
  for (let i = 0; i < path.length - 1; i++) {
    const segment = path[i] === '' ? String(Object.keys(node).length) : path[i];
    const child = node[segment];
    if (child === undefined || typeof child === 'string') node[segment] = {};
    node = node[segment] as FormObject;
  }
  const last = path[path.length - 1];
  node[last === '' ? String(Object.keys(node).length) : last] = value;
}

function indexObjectsToArrays(value: FormValue): FormValue {
  if (typeof value === 'string' || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  const converted: FormObject = {};
  for (const key of keys) converted[key] = indexObjectsToArrays(value[key]);
  const isArray = keys.length > 0 && keys.every((k) => /^\d+$/.test(k));
  if (!isArray) return converted;
  return keys.sort((a, b) => Number(a) - Number(b)).map((k) => converted[k]);
}
