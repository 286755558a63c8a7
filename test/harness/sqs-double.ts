import { createHash, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';

/**
 * Stands in for SQS's SendMessage (the AWS JSON protocol the SDK speaks): the client in
 * lib/material/imports/queue.ts sends to the queue URL's host, so IMPORT_QUEUE_URL pointing here
 * collects what the routes, maintenance and the worker send.
 */
export function sqsDouble(sent: string[]): Server {
  return createServer((req, res) => {
    let text = '';
    req.on('data', (chunk) => (text += chunk));
    req.on('end', () => {
      const body = JSON.parse(text || '{}') as { MessageBody?: string };
      if (req.headers['x-amz-target'] !== 'AmazonSQS.SendMessage' || body.MessageBody === undefined) {
        res.writeHead(400, { 'content-type': 'application/x-amz-json-1.0' });
        res.end(JSON.stringify({ __type: 'com.amazonaws.sqs#InvalidAction', message: 'SendMessage only' }));
        return;
      }
      sent.push(body.MessageBody);
      res.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' });
      res.end(
        JSON.stringify({
          MessageId: randomUUID(),
          // The SDK checks the body's MD5 against this.
          MD5OfMessageBody: createHash('md5').update(body.MessageBody).digest('hex'),
        }),
      );
    });
  });
}
