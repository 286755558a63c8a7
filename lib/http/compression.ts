import { constants } from 'node:zlib';
import httpContentEncoding from '@middy/http-content-encoding';
import type { ApiContext, ApiMiddleware, ApiRequest } from './types';

/**
 * Answers smaller than this are sent as they are: under a kilobyte compression saves a few hundred
 * bytes at most (a 261-byte envelope gzips to 204), less than one network packet, and the base64
 * the gateway needs for a compressed body makes the Lambda result larger, not smaller (272).
 */
export const MIN_COMPRESSED_BYTES = 1024;

/** The encodings offered, preferred first on equal weight: brotli is smaller and, at quality 1, faster. */
const ENCODINGS = ['br', 'gzip'] as const;
type Encoding = (typeof ENCODINGS)[number];

/**
 * The fastest level of each: the 50,000-row report (12.2 MB of JSON) becomes 1.58 MB in 88 ms with
 * brotli 1 and 1.88 MB in 187 ms with gzip 1, against 1.54 MB in 569 ms (brotli 4) and 1.78 MB in
 * 298 ms (gzip 6): the higher levels buy a few percent for several times the time (docs/decisions.md).
 */
export const COMPRESSION_OPTIONS = {
  br: { params: { [constants.BROTLI_PARAM_QUALITY]: 1 } },
  gzip: { level: 1 },
} as const;
const encoder = httpContentEncoding(COMPRESSION_OPTIONS);

/**
 * The encoding to answer with for an Accept-Encoding header (RFC 9110 12.5.3): the highest weight
 * among br and gzip (`*` stands for any not named; `q=0` refuses), br on a tie; none when neither
 * is accepted.
 */
export function negotiateEncoding(header: string | undefined): Encoding | undefined {
  if (!header) return undefined;
  const weights = new Map<string, number>();
  for (const part of header.toLowerCase().split(',')) {
    const [name, ...parameters] = part.split(';').map((piece) => piece.trim());
    if (!name) continue;
    const q = parameters.map((parameter) => /^q=([01](\.\d{0,3})?)$/.exec(parameter.replace(/\s+/g, ''))).find(Boolean);
    weights.set(name, q ? Number(q[1]) : 1);
  }
  let chosen: Encoding | undefined;
  let best = 0;
  for (const encoding of ENCODINGS) {
    const weight = weights.get(encoding) ?? weights.get('*') ?? 0;
    if (weight > best) {
      chosen = encoding;
      best = weight;
    }
  }
  return chosen;
}

/** What @middy/http-content-encoding reads from the context (set by content negotiation). */
type NegotiatedContext = ApiContext & { preferredEncoding?: Encoding; preferredEncodings?: Encoding[] };

const worthCompressing = (request: ApiRequest): boolean => {
  const body = request.response?.body;
  // A UTF-16 code unit is at most 3 UTF-8 bytes: a short body needs no count.
  return (
    typeof body === 'string' &&
    body.length * 3 >= MIN_COMPRESSED_BYTES &&
    Buffer.byteLength(body) >= MIN_COMPRESSED_BYTES
  );
};

/**
 * Compresses JSON answers of MIN_COMPRESSED_BYTES or more with br or gzip when the client accepts
 * one (@middy/http-content-encoding: base64 body, Content-Encoding, Vary), errors as well as
 * successes. lib/http/endpoint.ts runs it after the idempotency record, so what is stored for a
 * key is the plain envelope and each replay is compressed for the request that replays it.
 */
export function compressAnswers(): ApiMiddleware {
  const compress = async (request: ApiRequest) => {
    if (!worthCompressing(request)) return;
    await encoder.after?.(request as never);
  };
  return {
    name: 'compressAnswers',
    before: (request) => {
      const chosen = negotiateEncoding(request.event.headers?.['accept-encoding']);
      if (!chosen) return;
      const context = request.context as NegotiatedContext;
      context.preferredEncoding = chosen;
      context.preferredEncodings = [chosen];
    },
    after: compress,
    onError: async (request) => {
      if (request.response) await compress(request);
    },
  };
}
