import { performance } from 'node:perf_hooks';

/** The HTTP client of the bench parts that measure one request at a time (review, scale). */

export interface Answer {
  status: number;
  text: string;
  ms: number;
}

/** One request at a time, timed from send to the last byte of the answer. */
export class Client {
  constructor(
    readonly url: string,
    private readonly headers: Record<string, string> = {},
  ) {}

  withToken(token: string, organizationId: string) {
    return new Client(this.url, { authorization: `Bearer ${token}`, organization: organizationId });
  }

  async send(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Answer> {
    const headers: Record<string, string> = { ...this.headers };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const started = performance.now();
    const response = await fetch(`${this.url}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, text, ms: performance.now() - started };
  }

  async data<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const answer = await this.send(method, path, body);
    if (answer.status < 200 || answer.status > 299)
      throw new Error(`${method} ${path} answered ${answer.status}: ${answer.text.slice(0, 500)}`);
    return (JSON.parse(answer.text) as { data: T }).data;
  }
}

/** A query string of `params`. */
export const query = (params: Record<string, string>) => new URLSearchParams(params).toString();
