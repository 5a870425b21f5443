/**
 * A promise and what settles it, for one promise handed to many waiters and settled from
 * elsewhere (a batch of deletes or pushes sent together): Promise.withResolvers, which Node 20 lacks.
 */
export interface Settlement<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

export function settlement<T = void>(): Settlement<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  return { promise, resolve, reject };
}
