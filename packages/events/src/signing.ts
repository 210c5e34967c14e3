import { createHmac, randomBytes } from 'node:crypto';

/** A new signing secret, Standard Webhooks' form: `whsec_` + base64 of 24 random bytes. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/**
 * The three headers of a Standard Webhooks message: `webhook-signature` is `v1,` + base64 of
 * HMAC-SHA256 over `{id}.{timestamp}.{body}`, keyed with the base64-decoded part after `whsec_`.
 */
export function signatureHeaders(secret: string, id: string, body: string, at = new Date()): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}
