/**
 * Make `process.nextTick` hot before the service loads.
 *
 * Every request runs several of Node's own `nextTick`s (a request stream
 * ending, a socket write completing, a response closing). Each builds a small
 * object literal with computed keys. When `nextTick` first turns hot in the
 * middle of a service's start-up (database, sources, timers all queueing
 * ticks at once) V8 is often left defining those objects through its slow
 * runtime path for the life of the process: measured with `perf`, about a
 * fifth of a bare `node:http` handler's time inside the `nerkh serve`
 * process, in every full start measured. Making `nextTick` hot first, in a
 * few thousand calls over a few turns of the event loop (about 2 ms), leaves
 * it on the fast path: in the same measurement the slow path vanished in
 * every start (docs/performance.md).
 */
export async function settleNextTick(): Promise<void> {
  const nothing = (_turn: number): void => {};
  for (let turn = 0; turn < TURNS; turn++) {
    for (let call = 0; call < CALLS_PER_TURN; call++) process.nextTick(nothing, call);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const TURNS = 5;
const CALLS_PER_TURN = 1000;
