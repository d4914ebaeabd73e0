// Starts a Loopscope binary headless on a free port for a bench, pointed at a local upstream,
// with a fresh data directory; the benches share it (and children.mjs stops it if the bench is
// interrupted).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { track } from './children.mjs';

// Resolves once it listens: { url, pid, stop(beforeRemove) } (stop ends it, lets beforeRemove
// look at its data directory, then removes it).
export async function startLoopscope(bin, upstreamPort, extra = []) {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-loopscope-'));
  const proc = track(spawn(bin, ['--headless', '--port', '0', '--upstream', `http://127.0.0.1:${upstreamPort}/v1`,
    '--data-dir', dataDir, ...extra], { stdio: ['ignore', 'pipe', 'pipe'] }));
  const url = await new Promise((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/loopscope listening on (http:\/\/[^\s]+)/);
      if (m) resolve(m[1]);
    });
    proc.on('exit', (code) => reject(new Error(`loopscope exited ${code}`)));
  });
  // Its per-request log lines are read and dropped: a pipe nobody reads fills up and then
  // blocks the process's log writer, which a terminal never does.
  proc.stderr.resume();
  return { url, pid: proc.pid, stop: async (beforeRemove) => { proc.kill('SIGTERM'); await once(proc, 'exit'); beforeRemove?.(dataDir); rmSync(dataDir, { recursive: true, force: true }); } };
}
