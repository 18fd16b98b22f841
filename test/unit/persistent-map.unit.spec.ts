import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PersistentMap } from '../../src/core/persistent-map.js';

describe('PersistentMap (the fold\'s immutable maps)', () => {
  it('property: every version answers like a plain Map built the same way, and older versions never change', () => {
    const writes = fc.array(fc.array(fc.tuple(fc.integer({ min: 0, max: 40 }), fc.integer()), { maxLength: 4 }), { maxLength: 60 });
    fc.assert(fc.property(writes, (batches) => {
      const versions: { map: PersistentMap<number, number>; model: Map<number, number> }[] = [{ map: PersistentMap.empty(), model: new Map() }];
      for (const batch of batches) {
        const last = versions[versions.length - 1]!;
        const model = new Map(last.model);
        for (const [k, v] of batch) model.set(k, v);
        versions.push({ map: last.map.with(new Map(batch)), model });
      }
      for (const { map, model } of versions) {
        expect(map.size).toBe(model.size);
        expect([...map]).toEqual([...model]); // same entries, same (first-insertion) order
        for (let k = -1; k <= 41; k++) {
          expect(map.get(k)).toBe(model.get(k));
          expect(map.has(k)).toBe(model.has(k));
        }
      }
    }), { numRuns: 200 });
  });

  it('a version flattened past the depth bound leaves its ancestors as they were', () => {
    let map = PersistentMap.of<string, number>([['a', 0]]);
    const history = [map];
    for (let i = 1; i <= 40; i++) history.push((map = map.with(new Map([['a', i], [`k${i}`, i]]))));
    history.forEach((version, i) => {
      expect(version.get('a')).toBe(i);
      expect(version.size).toBe(i + 1);
      expect(version.has(`k${i + 1}`)).toBe(false);
    });
  });
});
