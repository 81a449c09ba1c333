/**
 * Wraps a read of what this process holds (the throttles, the routes, a number list) so that its calls run one
 * after another. The periodic read and one asked by a change announced elsewhere may overlap, and the older one,
 * answered last, would otherwise put back what was there before the change until the next periodic read.
 */
export function readsInTurn(read: () => Promise<void>): () => Promise<void> {
  let last: Promise<void> = Promise.resolve();
  return () => {
    const next = last.then(read);
    last = next.catch(() => undefined);
    return next;
  };
}
