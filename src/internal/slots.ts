/**
 * The jobs a worker or a queue has in hand: each takes a numbered place, and a place it leaves
 * is given to the next one. A worker adds and removes a job per job; a Map (or Set) used that
 * way rebuilds its table every few dozen entries, and the table it leaves behind, often old
 * enough to sit in V8's old generation, still points at the jobs it held then. V8's young
 * collector keeps alive whatever an old object points at until the next full collection, so
 * each of those jobs, its payload and its command survived a scavenge or two and was copied
 * into the old generation: with 32 jobs in hand, about a third of all the worker allocated
 * (see docs/speed.md, "Garbage"). Here the array of places grows only while more jobs are in
 * hand than ever before, and a place is emptied when its job leaves.
 */
export class Slots<T extends object> {
  readonly #items: (T | undefined)[] = [];
  /** Emptied places, reused last-freed first (numbers only: nothing here points at a job). */
  readonly #free: number[] = [];
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Takes a place for `item`; returns its number, which remove() is given. */
  add(item: T): number {
    const slot = this.#free.length > 0 ? this.#free.pop()! : this.#items.length;
    this.#items[slot] = item;
    this.#size++;
    return slot;
  }

  /** Empties the place, if `item` still holds it (a place is reused once emptied). */
  remove(slot: number, item: T): void {
    if (slot < 0 || this.#items[slot] !== item) return;
    this.#items[slot] = undefined;
    this.#free.push(slot);
    this.#size--;
  }

  /** The first item `matches` accepts, in place order. */
  find(matches: (item: T) => boolean): T | undefined {
    for (const item of this.#items) if (item !== undefined && matches(item)) return item;
    return undefined;
  }

  /** How many items `matches` accepts (no copy made: asked once per reserve). */
  count(matches: (item: T) => boolean): number {
    let n = 0;
    for (const item of this.#items) if (item !== undefined && matches(item)) n++;
    return n;
  }

  /** The items in hand, in place order (a copy: changing the slots while reading it is safe). */
  values(): T[] {
    const items: T[] = [];
    for (const item of this.#items) if (item !== undefined) items.push(item);
    return items;
  }
}
