export type SearchPredicate = (record: Record<string, unknown>) => boolean;

const CLAUSE = /^(?:metadata\[(['"])(.*?)\1\]|([a-z_]+))\s*:\s*(?:(['"])(.*?)\4|(-?\d+))/;
const JOINER = /^\s+(AND|OR)\s+/;

/**
 * Parses the subset of Stripe's search query language the simulators need: exact-match clauses
 * `metadata['k']:'v'` (double quotes too) and `field:'v'` / `field:123`, joined by AND or by OR
 * (Stripe rejects a mix of both). Returns an error message for anything else.
 */
export function parseSearchQuery(query: string): SearchPredicate | string {
  const clauses: SearchPredicate[] = [];
  const joiners = new Set<string>();
  let rest = query.trim();
  if (rest === '') return 'The query must not be empty.';
  for (;;) {
    const clause = CLAUSE.exec(rest);
    if (clause === null) return `Unsupported or malformed search clause at: ${rest}`;
    const [whole, , metadataKey, field, , quoted, number] = clause;
    const expected = quoted ?? number;
    clauses.push(
      metadataKey !== undefined
        ? (record) => (record.metadata as Record<string, unknown> | undefined)?.[metadataKey] === expected
        : (record) => record[field] !== undefined && record[field] !== null && String(record[field]) === expected,
    );
    rest = rest.slice(whole.length);
    if (rest.trim() === '') break;
    const joiner = JOINER.exec(rest);
    if (joiner === null) return `Expected AND or OR at: ${rest.trim()}`;
    joiners.add(joiner[1]);
    rest = rest.slice(joiner[0].length);
  }
  if (joiners.size > 1) return 'Search queries cannot combine AND and OR.';
  return joiners.has('OR')
    ? (record) => clauses.some((c) => c(record))
    : (record) => clauses.every((c) => c(record));
}
