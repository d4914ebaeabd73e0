// Waiting for gateways under test to go quiet, shared by the proxy benches: a Loopscope's
// recorder works through the last large flows after their answers went out, and on two cores it
// takes that CPU from whatever is measured next.
import { readdirSync, readFileSync } from 'node:fs';

// CPU time a process has used so far, in ns: the sum over its threads' scheduler counters.
export function cpuNs(pid) {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch { /* a thread that ended meanwhile */ }
  }
  return ns;
}

// Resolves once every process in `pids` has used under 1 ms of CPU in 25 ms, or after maxMs;
// with the milliseconds it waited.
export async function settle(pids, maxMs = 10000) {
  const start = Date.now();
  let last = pids.map(cpuNs);
  for (;;) {
    await new Promise((r) => setTimeout(r, 25));
    const now = pids.map(cpuNs);
    const quiet = now.every((ns, i) => ns - last[i] < 1e6);
    last = now;
    if (quiet || Date.now() - start > maxMs) return Date.now() - start;
  }
}
