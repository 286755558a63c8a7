import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Bundle } from '../../infra/bundle-report';
import { REPOSITORY_ROOT } from '../../infra/bundling';

/**
 * Runs the shipped Lambda bundles as the runtime does: each in a long-lived Node process (a warm
 * execution environment serves one invocation after another), in a directory outside the
 * repository where the only package within reach is the AWS SDK v3 the Lambda runtime provides.
 * A chunk missing from the bundle or a package left external that the runtime lacks fails the
 * bundle's load, as it would in the cloud.
 */

/**
 * Loads index.mjs once, then answers invocations read from stdin (one JSON line each) on fd 3,
 * one at a time. A failed load exits with the error on stderr.
 */
const HOST_RUNNER = `
import { createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
const replies = createWriteStream(null, { fd: 3 });
const send = (message) => replies.write(JSON.stringify(message) + '\\n');
const module = await import(new URL('./index.mjs', import.meta.url));
if (typeof module.handler !== 'function') throw new Error('index.mjs exports no handler');
send({ ready: true });
for await (const line of createInterface({ input: process.stdin })) {
  const { id, event, context, timeoutMs } = JSON.parse(line);
  const started = Date.now();
  const lambdaContext = { ...context, getRemainingTimeInMillis: () => Math.max(0, timeoutMs - (Date.now() - started)), done() {}, fail() {}, succeed() {} };
  try {
    send({ id, result: await module.handler(event, lambdaContext) });
  } catch (error) {
    send({ id, error: String(error && error.stack || error) });
  }
}
`;

export interface Invocation {
  event: unknown;
  /** What the function's own timeout leaves (getRemainingTimeInMillis at the start). */
  timeoutMs: number;
  functionName: string;
}

/** Keeps at most `maxProcesses` warm bundles; the least recently used is stopped for a new one. */
export class BundleHost {
  readonly root = mkdtempSync(join(tmpdir(), 'cebs-shipped-'));
  private readonly warm = new Map<string, WarmBundle>();
  /** Bundles loaded (cold starts), by function name. */
  readonly coldStarts: string[] = [];
  invocations = 0;

  constructor(
    private readonly environmentOf: (bundle: Bundle) => Record<string, string>,
    private readonly maxProcesses = 6,
  ) {
    // The runtime's SDK, and nothing else: Node resolves the bundle's bare imports from its
    // directory upwards, so root/node_modules is the only node_modules it can reach.
    mkdirSync(join(this.root, 'node_modules'));
    symlinkSync(join(REPOSITORY_ROOT, 'node_modules', '@aws-sdk'), join(this.root, 'node_modules', '@aws-sdk'), 'dir');
  }

  async invoke(bundle: Bundle, invocation: Invocation): Promise<unknown> {
    this.invocations += 1;
    let warm = this.warm.get(bundle.name);
    if (warm) this.warm.delete(bundle.name);
    else {
      if (this.warm.size >= this.maxProcesses) {
        const [oldest, stopped] = this.warm.entries().next().value!;
        this.warm.delete(oldest);
        stopped.stop();
      }
      warm = new WarmBundle(this.root, bundle, this.environmentOf(bundle));
      this.coldStarts.push(bundle.name);
    }
    this.warm.set(bundle.name, warm);
    return warm.invoke(invocation);
  }

  close(): void {
    for (const process of this.warm.values()) process.stop();
    this.warm.clear();
    rmSync(this.root, { recursive: true, force: true });
  }
}

class WarmBundle {
  private readonly child: ChildProcess;
  private readonly ready: Promise<void>;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  private next = 0;
  private stderr = '';
  private exited: Error | undefined;

  constructor(
    root: string,
    private readonly bundle: Bundle,
    environment: Record<string, string>,
  ) {
    const directory = join(root, 'functions', bundle.name);
    cpSync(bundle.directory, directory, { recursive: true });
    writeFileSync(join(directory, 'host.mjs'), HOST_RUNNER);
    this.child = spawn(process.execPath, ['host.mjs'], {
      cwd: directory,
      // Only what Lambda sets and the function's own variables: no NODE_OPTIONS (tsx, vitest).
      env: {
        PATH: process.env.PATH ?? '',
        TZ: 'UTC',
        LANG: 'en_US.UTF-8',
        AWS_LAMBDA_FUNCTION_NAME: bundle.name,
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1024',
        AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
        AWS_REGION: 'us-east-1',
        AWS_DEFAULT_REGION: 'us-east-1',
        ...environment,
      },
      stdio: ['pipe', 'ignore', 'pipe', 'pipe'],
    });
    this.child.stderr!.on('data', (chunk) => {
      this.stderr = (this.stderr + chunk).slice(-4000);
    });
    let markReady!: () => void;
    let failReady!: (error: Error) => void;
    this.ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failReady = reject;
    });
    createInterface({ input: this.child.stdio[3] as NodeJS.ReadableStream }).on('line', (line) => {
      const message = JSON.parse(line) as { ready?: true; id?: number; result?: unknown; error?: string };
      if (message.ready) return markReady();
      const waiting = this.pending.get(message.id!);
      this.pending.delete(message.id!);
      if (message.error !== undefined)
        waiting?.reject(new Error(`${bundle.name}: the handler threw (a 500 from the gateway): ${message.error}`));
      else waiting?.resolve(message.result);
    });
    this.child.on('exit', (code, signal) => {
      this.exited = new Error(`${bundle.name}: the process exited (${code ?? signal}): ${this.stderr}`);
      failReady(this.exited);
      for (const waiting of this.pending.values()) waiting.reject(this.exited);
      this.pending.clear();
    });
    this.ready.catch(() => {});
  }

  async invoke({ event, timeoutMs, functionName }: Invocation): Promise<unknown> {
    await this.ready;
    if (this.exited) throw this.exited;
    const id = this.next++;
    const context = {
      callbackWaitsForEmptyEventLoop: false,
      functionName,
      functionVersion: '$LATEST',
      invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
      memoryLimitInMB: '1024',
      awsRequestId: crypto.randomUUID(),
      logGroupName: `/aws/lambda/${functionName}`,
      logStreamName: 'shipped-bundles',
    };
    return new Promise((resolve, reject) => {
      // Lambda ends an invocation at the function's timeout and starts the next in a fresh environment.
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${this.bundle.name}: timed out after ${timeoutMs} ms: ${this.stderr}`));
        this.child.kill();
      }, timeoutMs + 1000);
      this.pending.set(id, {
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      this.child.stdin!.write(`${JSON.stringify({ id, event, context, timeoutMs })}\n`);
    });
  }

  stop(): void {
    this.child.removeAllListeners('exit');
    this.child.kill();
  }

  toString(): string {
    return this.bundle.name;
  }
}
