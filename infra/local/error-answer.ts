import { randomUUID } from 'node:crypto';
import { type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { errorResponse } from '../../lib/http/error-envelope';
import { ERROR_STATUS, type ErrorCode } from '../../lib/http/errors';

/** The error envelope lib/http/error-envelope.ts answers, for requests the local server refuses itself. */
function envelope(code: ErrorCode, message: string) {
  const requestId = randomUUID();
  const answer = errorResponse({
    status: ERROR_STATUS[code],
    code,
    message,
    requestId,
    headers: { 'X-Request-Id': requestId },
  });
  return { statusCode: answer.statusCode!, body: answer.body!, headers: answer.headers as Record<string, string> };
}

/** Answers the error envelope on a response. */
export function sendError(
  res: ServerResponse,
  code: ErrorCode,
  message: string,
  headers: Record<string, string> = {},
): void {
  const answer = envelope(code, message);
  res.writeHead(answer.statusCode, { ...answer.headers, ...headers });
  res.end(answer.body);
}

/**
 * Answers the error envelope straight on the socket and closes it: Node's HTTP parser refused the
 * request (clientError), so there is no response object, and the connection cannot be reused.
 */
export function writeErrorToSocket(socket: Duplex, code: ErrorCode, message: string): void {
  const answer = envelope(code, message);
  const head = [
    `HTTP/1.1 ${answer.statusCode} ${STATUS_CODES[answer.statusCode]}`,
    ...Object.entries(answer.headers).map(([name, value]) => `${name}: ${value}`),
    `Content-Length: ${Buffer.byteLength(answer.body)}`,
    'Connection: close',
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${answer.body}`);
}
