/**
 * An immutable map whose `with` costs what it changes, not what it holds: each version is a small
 * layer of its own entries over the version it came from, flattened into one plain Map once the
 * chain gets deep. The fold keeps every workflow state immutable (a failed append must leave the
 * state it was decided on untouched) without copying a 10,000-effect map for each event.
 * Iteration follows first insertion, as a Map's does.
 */
export class PersistentMap<K, V> implements ReadonlyMap<K, V> {
  private static readonly MAX_DEPTH = 16;
  private flat?: Map<K, V>;

  private constructor(
    private readonly parent: PersistentMap<K, V> | undefined,
    private readonly own: ReadonlyMap<K, V>,
    private readonly depth: number,
    readonly size: number,
  ) {}

  static empty<K, V>(): PersistentMap<K, V> {
    return new PersistentMap<K, V>(undefined, new Map(), 0, 0);
  }

  static of<K, V>(entries: Iterable<readonly [K, V]>): PersistentMap<K, V> {
    const map = new Map(entries);
    return new PersistentMap<K, V>(undefined, map, 0, map.size);
  }

  /** A new version with these entries set; this one is unchanged. */
  with(entries: ReadonlyMap<K, V>): PersistentMap<K, V> {
    if (entries.size === 0) return this;
    let added = 0;
    for (const key of entries.keys()) if (!this.has(key)) added++;
    if (this.depth + 1 < PersistentMap.MAX_DEPTH) return new PersistentMap(this, entries, this.depth + 1, this.size + added);
    const flat = new Map(this.flatten());
    for (const [key, value] of entries) flat.set(key, value);
    return new PersistentMap<K, V>(undefined, flat, 0, flat.size);
  }

  get(key: K): V | undefined {
    for (let layer: PersistentMap<K, V> | undefined = this; layer; layer = layer.parent) {
      const value = layer.own.get(key);
      if (value !== undefined || layer.own.has(key)) return value;
    }
    return undefined;
  }

  has(key: K): boolean {
    for (let layer: PersistentMap<K, V> | undefined = this; layer; layer = layer.parent) if (layer.own.has(key)) return true;
    return false;
  }

  forEach(callback: (value: V, key: K, map: ReadonlyMap<K, V>) => void): void {
    for (const [key, value] of this.flatten()) callback(value, key, this);
  }

  entries(): MapIterator<[K, V]> {
    return this.flatten().entries();
  }

  keys(): MapIterator<K> {
    return this.flatten().keys();
  }

  values(): MapIterator<V> {
    return this.flatten().values();
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
  }

  /** The whole map as one plain Map, computed once per version (iteration is off the hot path). */
  private flatten(): Map<K, V> {
    if (this.flat) return this.flat;
    const layers: ReadonlyMap<K, V>[] = [];
    for (let layer: PersistentMap<K, V> | undefined = this; layer; layer = layer.parent) layers.push(layer.own);
    const flat = new Map(layers.pop()!);
    for (let i = layers.length - 1; i >= 0; i--) for (const [key, value] of layers[i]!) flat.set(key, value);
    return (this.flat = flat);
  }
}
