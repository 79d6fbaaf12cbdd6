/**
 * CPU time spent by processes the benchmarks run beside them (Linux /proc; null elsewhere or when a
 * process cannot be read): on a machine of few cores a wall-clock ratio is only understood next to
 * the CPU each process of the pipeline needed for it.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** The fields of /proc/<pid>/stat after the command name (the first is the state, the second the parent's pid). */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** User + system CPU seconds a live process has used so far. */
export function processCpuSeconds(pid: number): number | null {
  const f = statFields(pid);
  return f ? (Number(f[11]) + Number(f[12])) / clockTicks() : null;
}

/** A live process's parent (for a PostgreSQL backend, from `select pg_backend_pid()`: its server's postmaster). */
export function parentPid(pid: number): number | null {
  const f = statFields(pid);
  return f ? Number(f[1]) : null;
}

/**
 * User + system CPU seconds of a whole PostgreSQL server so far, its backends included: the
 * postmaster's own, its live children's, and those of the children it has reaped (a closed
 * connection's backend).
 */
export function postgresCpuSeconds(postmaster: number): number | null {
  const own = statFields(postmaster);
  if (!own) return null;
  const ticks = (f: string[], from: number, to: number) => f.slice(from, to + 1).reduce((sum, v) => sum + Number(v), 0);
  let total = ticks(own, 11, 14); // utime, stime, cutime, cstime
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const f = statFields(Number(entry));
    if (f && Number(f[1]) === postmaster) total += ticks(f, 11, 12);
  }
  return total / clockTicks();
}
