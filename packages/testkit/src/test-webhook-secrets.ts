import { createSecretBox, type SecretBox } from '@msp/secrets';

// One fixed key for every app and dispatcher of a test run: a dispatcher started as "another
// process" opens the secrets the app sealed, as replicas sharing WEBHOOK_ENCRYPTION_KEY do.
const KEY = Buffer.from('test-webhook-encryption-key-0123'.padEnd(32, '0').slice(0, 32));

/** The webhook signing secrets' box of services under test. */
export function testWebhookSecrets(): SecretBox {
  return createSecretBox(KEY, 'WEBHOOK_ENCRYPTION_KEY');
}
