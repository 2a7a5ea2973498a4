/**
 * Polling for state outside the test's reach that announces nothing the test can await (a Redis server coming back,
 * a replica promoted by its cluster): `probe` is asked again every `everyMs` until `done` accepts its answer. There
 * is no count of tries and no deadline here: the test file's time limit is the only bound, so a loaded machine
 * makes such a test slower, never wrong. Await an event instead wherever there is one.
 */
export async function eventually<T> (probe: () => Promise<T>, done: (value: T) => boolean, everyMs = 20): Promise<T> {
  for (;;) {
    const value = await probe()
    if (done(value)) return value
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
