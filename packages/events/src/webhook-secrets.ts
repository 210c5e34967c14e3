import { createSecretBox, isSealed, resolveEncryptionKey, type SecretBox } from '@msp/secrets';

/**
 * Webhook signing secrets are stored sealed (AES-256-GCM under WEBHOOK_ENCRYPTION_KEY), as link's
 * connector tokens are. Rows from before that hold the plain `whsec_…`: they are still read, and
 * sealed when a dispatcher starts (sealPlainSecrets).
 */
export function openWebhookSecret(secrets: SecretBox, stored: string): string {
  return isSealed(stored) ? secrets.open(stored) : stored;
}

export const WEBHOOK_KEY_VARIABLE = 'WEBHOOK_ENCRYPTION_KEY';

/** The service's box from its configuration: WEBHOOK_ENCRYPTION_KEY, or outside production a key of its own under DATA_DIR. */
export function webhookSecretsFromConfig(config: { WEBHOOK_ENCRYPTION_KEY?: string; DATA_DIR: string }): SecretBox {
  return createSecretBox(
    resolveEncryptionKey(config.WEBHOOK_ENCRYPTION_KEY, config.DATA_DIR, {
      variable: WEBHOOK_KEY_VARIABLE,
      file: 'webhook-encryption.key',
    }),
    WEBHOOK_KEY_VARIABLE,
  );
}
