import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { completeSandboxCheckout } from '../../lib/billing/payment-methods';
import { sandboxInvoice } from '../../lib/billing/processor/sandbox';
import { errorResponse } from '../../lib/http/error-envelope';
import { ERROR_STATUS } from '../../lib/http/errors';
import { checkEvidenceDownload } from '../../lib/material/evidence-hash';
import { ANSWER_PREFIX, DirectoryStorage, objectStorage } from '../../lib/storage';
import { sendError } from './error-answer';
import { PassThrough } from 'node:stream';
import { readAtMost } from './request-body';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The sandbox card form holds a card number: a few dozen bytes. */
const MAX_FORM_BYTES = 10_000;

/** The submitted form, or null when the body is larger than a form of these pages can be. */
async function formBody(req: IncomingMessage): Promise<URLSearchParams | null> {
  const body = await readAtMost(req, MAX_FORM_BYTES);
  return body && new URLSearchParams(body.toString('utf8'));
}

/** The object key of a /_local/... path, decoded segment by segment; null when the encoding is malformed. */
function objectKeyOf(encoded: string): string | null {
  try {
    return encoded.split('/').map(decodeURIComponent).join('/');
  } catch {
    return null;
  }
}

const dollars = (cents: number) =>
  `${cents < 0 ? '-' : ''}$${(Math.abs(cents) / 100).toFixed(2).replace(/\B(?=(\d{3})+(?!\d))/g, ',')}`;

/**
 * Local-only pages that stand in for what lives outside our walls in the cloud: the sandbox
 * processor's card set-up page and hosted invoice pages (Stripe's hosted_invoice_url), and the
 * directory object store's signed download and upload links (presigned S3 GET and PUT).
 * Returns false when the request is not one of them.
 */
export async function handleDevRoute(req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> {
  const checkout = /^\/_sandbox\/checkout\/([A-Za-z0-9_]+)(\/complete)?$/.exec(url.pathname);
  if (checkout && req.method === 'GET' && !checkout[2]) {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><head><title>Sandbox card set-up</title></head><body style="font-family:sans-serif;max-width:32rem;margin:3rem auto">
<h1>Save a card (sandbox)</h1><p>No money moves. A card number ending in 0002 is declined.</p>
<form method="post" action="/_sandbox/checkout/${escapeHtml(checkout[1]!)}/complete">
<label>Card number <input name="cardNumber" value="4242 4242 4242 4242" autocomplete="off"></label>
<button type="submit">Save card</button></form></body></html>`);
    return true;
  }
  if (checkout && req.method === 'POST' && checkout[2]) {
    const form = await formBody(req);
    if (!form) {
      sendError(res, 'PAYLOAD_TOO_LARGE', `The form is larger than ${MAX_FORM_BYTES} bytes`);
      return true;
    }
    const completed = await completeSandboxCheckout(checkout[1]!, form.get('cardNumber') ?? '4242424242424242');
    if (!completed) {
      sendError(res, 'NOT_FOUND', 'This checkout session is unknown or already completed');
      return true;
    }
    res.writeHead(303, { Location: completed.successUrl });
    res.end();
    return true;
  }
  const invoicePath = /^\/_sandbox\/invoices\/([A-Za-z0-9_]+)$/.exec(url.pathname);
  if (invoicePath && req.method === 'GET') {
    // Like Stripe's hosted invoice link: the unguessable id is the capability.
    const invoice = await sandboxInvoice(invoicePath[1]!);
    if (!invoice) {
      sendError(res, 'NOT_FOUND', 'This invoice is unknown');
      return true;
    }
    const lines = invoice.lines
      .map(
        (line) =>
          `<tr><td>${escapeHtml(line.description)}</td><td style="text-align:right">${dollars(line.amountCents)}</td></tr>`,
      )
      .join('');
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><head><title>Invoice ${escapeHtml(invoice.id)} (sandbox)</title></head><body style="font-family:sans-serif;max-width:40rem;margin:3rem auto">
<h1>Invoice (sandbox)</h1><p>${escapeHtml(invoice.id)} &middot; ${escapeHtml(invoice.createdAt.toISOString().slice(0, 10))} &middot; status <strong>${escapeHtml(invoice.status)}</strong></p>
<table style="width:100%;border-collapse:collapse"><tbody>${lines}</tbody>
<tfoot><tr><th style="text-align:left">Total</th><th style="text-align:right">${dollars(invoice.amountCents)}</th></tr></tfoot></table></body></html>`);
    return true;
  }
  const upload = /^\/_local\/uploads\/(.+)$/.exec(url.pathname);
  if (upload && req.method === 'PUT') {
    // The stand-in for a presigned S3 PUT: signed over key, content type and size, expiring.
    const storage = objectStorage();
    // The storage refuses keys that would resolve outside its directory (and any link not signed by it).
    const key = objectKeyOf(upload[1]!);
    const link = {
      expires: Number(url.searchParams.get('expires')),
      size: Number(url.searchParams.get('size')),
      signature: url.searchParams.get('signature') ?? '',
      contentType: String(req.headers['content-type'] ?? ''),
      // Required and checked, as S3 does: the cloud bucket's Object Lock refuses an upload without it.
      contentMd5: req.headers['content-md5']?.toString(),
    };
    // Streamed to disk through a pass-through, so a refused body can end without destroying the
    // request's socket under the answer: the rest is read and dropped, then the answer is sent.
    const body = new PassThrough();
    req.pipe(body);
    // With uploadId and partNumber: a part of a multipart upload (S3's presigned UploadPart).
    const uploadId = url.searchParams.get('uploadId');
    const part = uploadId === null ? null : { uploadId, partNumber: Number(url.searchParams.get('partNumber')) };
    const outcome =
      key === null || !(storage instanceof DirectoryStorage)
        ? 'forbidden'
        : part
          ? await storage.writeSignedPart(key, { ...link, ...part }, body)
          : await storage.writeSignedStream(key, link, body);
    if (outcome !== 'stored') {
      req.unpipe(body);
      req.resume();
    }
    if (outcome === 'stored') {
      // A part's ETag, as S3 answers UploadPart (the client may keep it; the parts route lists it too).
      const etag =
        part && key && storage instanceof DirectoryStorage
          ? await storage.partEtag(key, part.uploadId, part.partNumber)
          : null;
      res.writeHead(200, { 'Content-Type': 'text/plain', ...(etag ? { ETag: etag } : {}) });
      res.end('Stored');
    } else if (outcome === 'forbidden')
      sendError(res, 'FORBIDDEN', 'The link is invalid or has expired, or the content type differs');
    else if (outcome === 'no-such-upload')
      sendError(res, 'NOT_FOUND', 'The multipart upload was completed or aborted (S3: NoSuchUpload)');
    else if (outcome === 'sealed')
      sendError(res, 'CONFLICT', 'The file of this link is already in use as evidence: it can no longer be replaced');
    else if (outcome === 'missing-md5')
      sendError(
        res,
        'BAD_REQUEST',
        'The Content-MD5 header is missing: send the base64 MD5 of the body (S3 requires it under Object Lock)',
      );
    else if (outcome === 'bad-digest')
      sendError(res, 'BAD_REQUEST', 'The Content-MD5 header is not the base64 MD5 of the body (S3: BadDigest)');
    else if (outcome === 'incomplete')
      sendError(res, 'BAD_REQUEST', 'The body is shorter than the size the link was made for (S3: IncompleteBody)');
    else sendError(res, 'PAYLOAD_TOO_LARGE', 'The body is larger than the size the link was made for');
    return true;
  }
  const object = /^\/_local\/objects\/(.+)$/.exec(url.pathname);
  if (object && req.method === 'GET') {
    await serveSignedObject(req, res, url, objectKeyOf(object[1]!));
    return true;
  }
  return false;
}

/** Stored answers' encodings by name ending (lib/storage/answers.ts), as S3 keeps them in the object's metadata. */
const ANSWER_ENCODINGS: Record<string, string> = { '.json.gz': 'gzip', '.json.br': 'br', '.json': '' };

/**
 * The headers an object is served with: its type by its name (S3 keeps the type it was stored
 * with). A stored answer (ANSWER_PREFIX) is JSON with its Content-Encoding, readable from any
 * origin as the work bucket's CORS rule allows (a browser following a cross-origin 303 sends
 * `Origin: null`), and never cached.
 */
function objectHeaders(key: string): Record<string, string> {
  if (key.startsWith(ANSWER_PREFIX)) {
    const ending = Object.keys(ANSWER_ENCODINGS).find((suffix) => key.endsWith(suffix));
    const encoding = ending ? ANSWER_ENCODINGS[ending] : '';
    return {
      'Content-Type': 'application/json',
      ...(encoding ? { 'Content-Encoding': encoding } : {}),
      'Cache-Control': 'private, no-store',
      'Access-Control-Allow-Origin': '*',
    };
  }
  return { 'Content-Type': key.endsWith('.pdf') ? 'application/pdf' : 'application/octet-stream' };
}

/**
 * GET /_local/objects/{key}: the stand-in for a presigned S3 GET, streamed from disk (never read
 * whole). An evidence object (one with an evidence_objects row: email and note attachments) is
 * hashed first and served only if it still matches the hash recorded at import; a mismatch answers
 * 409 CONFLICT in the error envelope and records `evidence.object.integrity_failed`, a match records
 * `evidence.object.downloaded` (lib/material/evidence-hash.ts). The link is the capability, so the
 * events name an anonymous actor with the caller's address.
 */
async function serveSignedObject(req: IncomingMessage, res: ServerResponse, url: URL, key: string | null) {
  const storage = objectStorage();
  const opened =
    key !== null && storage instanceof DirectoryStorage
      ? await storage.openSigned(key, Number(url.searchParams.get('expires')), url.searchParams.get('signature') ?? '')
      : null;
  if (!key || !opened) return sendError(res, 'FORBIDDEN', 'The link is invalid or has expired');
  const requestId = randomUUID();
  try {
    const userAgent = req.headers['user-agent'];
    const verdict = await checkEvidenceDownload(key, () => opened.stream(), {
      actor: { type: 'anonymous', userId: null, tokenId: null },
      ip: req.socket.remoteAddress ?? null,
      userAgent: typeof userAgent === 'string' ? userAgent : null,
      requestId,
    });
    if (verdict === 'integrity-failed') {
      const answer = errorResponse({
        status: ERROR_STATUS.CONFLICT,
        code: 'CONFLICT',
        message: 'This evidence object no longer matches the hash recorded at import: it is not served',
        requestId,
        headers: { 'X-Request-Id': requestId },
      });
      res.writeHead(answer.statusCode!, answer.headers as Record<string, string>);
      res.end(answer.body);
      return;
    }
    res.writeHead(200, { ...objectHeaders(key), 'Content-Length': opened.size, 'X-Request-Id': requestId });
    // A caller that goes away mid-download just ends it: nothing is left to answer.
    await pipeline(opened.stream(), res).catch(() => res.destroy());
  } finally {
    await opened.close();
  }
}
