import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';

const ROOT = resolve(import.meta.dirname, '../..');

export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolvePort(port));
    });
  });
}

/** The last line of test/bench/memory-probe.ts, when the server was started with it. */
export type MemoryProbe = Record<'thread' | 'heapTotalMb' | 'heapUsedMb' | 'externalMb', number>;

const PROBE_PREFIX = 'memory-probe ';

/** A server under test, as a child process so it never shares the load generator's event loop. */
export class ServerProcess {
  private readonly child: ChildProcess;
  private exited: Promise<void>;
  /** The memory probe's last reading of each thread (test/bench/memory-probe.ts preloaded), by thread id (0: main). */
  readonly memory = new Map<number, MemoryProbe>();

  constructor(
    readonly name: string,
    entry: string,
    readonly url: string,
    env: NodeJS.ProcessEnv,
    /** Extra node flags after tsx, before the entry: `--import ./test/bench/without-audit.ts`. */
    nodeArgs: readonly string[] = [],
  ) {
    // node itself is the child (no shell), so its pid is the server's for /proc readings.
    this.child = spawn(process.execPath, ['--import', 'tsx', ...nodeArgs, entry], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const stream of [this.child.stdout, this.child.stderr]) {
      if (!stream) continue;
      createInterface({ input: stream }).on('line', (line) => {
        if (line.startsWith(PROBE_PREFIX)) {
          const reading = JSON.parse(line.slice(PROBE_PREFIX.length)) as MemoryProbe;
          this.memory.set(reading.thread, reading);
        } else process.stderr.write(`[${name}] ${line}\n`);
      });
    }
    this.exited = new Promise((resolveExit) => this.child.once('exit', () => resolveExit()));
  }

  async waitHealthy(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let gone = false;
    void this.exited.then(() => (gone = true));
    while (Date.now() < deadline) {
      if (gone) throw new Error(`${this.name} server exited before answering GET /health`);
      try {
        if ((await fetch(`${this.url}/health`)).ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((wait) => setTimeout(wait, 100));
    }
    throw new Error(`${this.name} server did not answer GET /health within ${timeoutMs} ms`);
  }

  /** Resident set size of the server process in MB (Linux: VmRSS of /proc/<pid>/status). */
  rssMb(): number {
    const status = readFileSync(`/proc/${this.child.pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1];
    if (kb === undefined) throw new Error(`${this.name} server: no VmRSS in /proc/${this.child.pid}/status`);
    return Number(kb) / 1024;
  }

  /** Sends a signal to the server process (SIGUSR2 writes a heap snapshot under --heapsnapshot-signal). */
  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    const killer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await this.exited;
    clearTimeout(killer);
  }
}
