import { randomBytes } from 'node:crypto';
import { ConfigError } from '@msp/http';
import { OutboundBlockedError, outboundFromConfig } from '@msp/outbound';
import { loadLinkConfig } from '../src/config';
import { createSecretBox } from '@msp/secrets';

const base = { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/link' };
const key = () => randomBytes(32).toString('base64');

describe('connector settings of link', () => {
  test('When nothing is set, then the sync interval is 60 minutes, outbound calls time out after 10 s and no key is needed outside production', () => {
    const config = loadLinkConfig({ ...base });
    expect(config).toMatchObject({ SYNC_INTERVAL_MINUTES: 60, OUTBOUND_TIMEOUT_MS: 10000 });
    expect(config.CONNECTOR_ENCRYPTION_KEY).toBeUndefined();
  });

  test(
    'When NODE_ENV is development or unset, then loopback directories are still refused ' +
      'unless OUTBOUND_ALLOW_LOOPBACK=true (what pnpm start sets)',
    async () => {
      for (const NODE_ENV of ['development', 'test', undefined]) {
        const config = loadLinkConfig({ ...base, ...(NODE_ENV ? { NODE_ENV } : {}) });
        expect(config.OUTBOUND_ALLOW_LOOPBACK).toBe(false);
        await expect(outboundFromConfig(config).check('http://127.0.0.1:8080/scim')).rejects.toBeInstanceOf(
          OutboundBlockedError,
        );
      }
      const allowing = outboundFromConfig(loadLinkConfig({ ...base, OUTBOUND_ALLOW_LOOPBACK: 'true' }));
      await expect(allowing.check('http://127.0.0.1:8080/scim')).resolves.toBeUndefined();
      await expect(allowing.check('http://169.254.169.254/')).rejects.toBeInstanceOf(OutboundBlockedError);
    },
  );

  test('When NODE_ENV=production has no CONNECTOR_ENCRYPTION_KEY, then the configuration is refused naming it', () => {
    expect(() => loadLinkConfig({ ...base, NODE_ENV: 'production' })).toThrow(ConfigError);
    expect(() => loadLinkConfig({ ...base, NODE_ENV: 'production' })).toThrow(/CONNECTOR_ENCRYPTION_KEY is required/);
    expect(
      loadLinkConfig({
        ...base,
        NODE_ENV: 'production',
        CONNECTOR_ENCRYPTION_KEY: key(),
        WEBHOOK_ENCRYPTION_KEY: key(),
      }).NODE_ENV,
    ).toBe('production');
  });

  test('When NODE_ENV=production has no WEBHOOK_ENCRYPTION_KEY, or it is malformed, then the configuration is refused naming it, never echoing it', () => {
    expect(() => loadLinkConfig({ ...base, NODE_ENV: 'production', CONNECTOR_ENCRYPTION_KEY: key() })).toThrow(
      /WEBHOOK_ENCRYPTION_KEY is required when NODE_ENV=production/,
    );
    const error = (() => {
      try {
        loadLinkConfig({ ...base, WEBHOOK_ENCRYPTION_KEY: 'not-a-key-but-maybe-a-secret' });
      } catch (caught) {
        return caught as Error;
      }
      throw new Error('expected a refusal');
    })();
    expect(error.message).toContain('WEBHOOK_ENCRYPTION_KEY must be 32 bytes');
    expect(error.message).not.toContain('not-a-key-but-maybe-a-secret');
  });

  test.each(['short', `${randomBytes(16).toString('base64')}`, `${randomBytes(33).toString('base64')}`])(
    'When CONNECTOR_ENCRYPTION_KEY is malformed (%s), then it is refused naming the variable without echoing the value',
    (value) => {
      const error = (() => {
        try {
          loadLinkConfig({ ...base, CONNECTOR_ENCRYPTION_KEY: value });
        } catch (e) {
          return e as Error;
        }
        throw new Error('accepted');
      })();
      expect(error).toBeInstanceOf(ConfigError);
      expect(error.message).toContain('CONNECTOR_ENCRYPTION_KEY must be 32 bytes');
      expect(error.message).not.toContain(value);
    },
  );

  test('When OUTBOUND_ALLOWLIST has an entry that is no host, IP or CIDR, or SYNC_INTERVAL_MINUTES is not positive, then they are refused by name', () => {
    expect(() => loadLinkConfig({ ...base, OUTBOUND_ALLOWLIST: '10.0.0.0/8, http://bad' })).toThrow(
      /OUTBOUND_ALLOWLIST "http:\/\/bad"/,
    );
    expect(() => loadLinkConfig({ ...base, SYNC_INTERVAL_MINUTES: '0' })).toThrow(/SYNC_INTERVAL_MINUTES/);
    expect(
      loadLinkConfig({ ...base, OUTBOUND_ALLOWLIST: 'scim.corp, 10.0.0.0/8', SYNC_INTERVAL_MINUTES: '0.5' })
        .SYNC_INTERVAL_MINUTES,
    ).toBe(0.5);
  });

  test('When FULL_SYNC_INTERVAL_HOURS is unset, then it is 24; when it is not a positive number, then it is refused by name', () => {
    expect(loadLinkConfig({ ...base }).FULL_SYNC_INTERVAL_HOURS).toBe(24);
    expect(loadLinkConfig({ ...base, FULL_SYNC_INTERVAL_HOURS: '6.5' }).FULL_SYNC_INTERVAL_HOURS).toBe(6.5);
    expect(() => loadLinkConfig({ ...base, FULL_SYNC_INTERVAL_HOURS: '0' })).toThrow(/FULL_SYNC_INTERVAL_HOURS/);
    expect(() => loadLinkConfig({ ...base, FULL_SYNC_INTERVAL_HOURS: 'daily' })).toThrow(/FULL_SYNC_INTERVAL_HOURS/);
  });
});

describe('connector secrets', () => {
  test('When a token is sealed, then it opens again only under the same key, and a changed byte is refused', () => {
    const box = createSecretBox(randomBytes(32));
    const sealed = box.seal('token-123');
    expect(sealed).not.toContain('token-123');
    expect(box.seal('token-123')).not.toBe(sealed); // a fresh IV each time
    expect(box.open(sealed)).toBe('token-123');
    expect(() => createSecretBox(randomBytes(32)).open(sealed)).toThrow();
    const parts = sealed.split('.');
    parts[3] = Buffer.from('token-124').toString('base64url');
    expect(() => box.open(parts.join('.'))).toThrow();
    expect(() => createSecretBox(randomBytes(16))).toThrow(/32 bytes/);
  });
});
