// The processes a bench started, stopped when it ends or is interrupted: a killed bench
// otherwise leaves them running (and taking the CPU from the next run).
const children = new Set();

// Tracks `proc` until it exits; returns it.
export function track(proc) {
  children.add(proc);
  proc.on('exit', () => children.delete(proc));
  return proc;
}

process.on('exit', () => { for (const c of children) c.kill('SIGKILL'); });
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => process.exit(130));
