// Which scan of this thread is running. Memos that read a whole project (the
// Python front end's project pools and callers) hold for one scan only: a
// second scan in the same process (the API, tests) may find the files
// changed. Workers live for one scan, so theirs stays at 0.
let current = 0;

/** Called once at the start of each scan. */
export function nextScanGeneration(): void {
  current++;
}

export function scanGeneration(): number {
  return current;
}

/** A Map that forgets its entries when a new scan starts. */
export class PerScanMap<K, V> {
  private generation = current;
  private readonly map = new Map<K, V>();

  get(key: K): V | undefined {
    this.refresh();
    return this.map.get(key);
  }

  set(key: K, value: V): void {
    this.refresh();
    this.map.set(key, value);
  }

  clear(): void {
    this.map.clear();
  }

  private refresh(): void {
    if (this.generation === current) return;
    this.generation = current;
    this.map.clear();
  }
}
