import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { createHmac } from 'node:crypto';
import { checkWebhookUrl, isAllowedAddress } from '../../shared/webhookUrls.js';
import { createKeyring, decryptSecret, encryptSecret, generateSecretKeyText, generateSigningSecret, parseSecretKey } from '../../shared/webhookSecrets.js';
import { loadKeyring } from '../../shared/webhookKeyring.js';
import { signatureHeaders } from '../../webhooks/sign.js';
import { useTestDb } from '../helpers/db.js';

describe('webhook URL policy', () => {
  const resolveTo = (addresses: string[]) => async () => addresses;

  it('refuses names that resolve to private or loopback addresses (127.0.0.1.nip.io, localtest.me)', async () => {
    for (const [host, answer] of [
      ['127.0.0.1.nip.io', ['127.0.0.1']],
      ['localtest.me', ['127.0.0.1', '::1']],
      ['metadata.example.com', ['169.254.169.254']],
      ['mixed.example.com', ['8.8.8.8', '10.0.0.5']],
      ['mapped.example.com', ['::ffff:192.168.0.1']],
    ] as const) {
      const verdict = await checkWebhookUrl(`https://${host}/x`, { allowPrivate: false, resolve: resolveTo([...answer]) });
      expect(verdict.ok, host).to.equal(false);
    }
  });

  it('accepts names resolving to public addresses, and names that do not resolve yet', async () => {
    expect((await checkWebhookUrl('https://hooks.example.com/x', { allowPrivate: false, resolve: resolveTo(['93.184.216.34']) })).ok).to.equal(true);
    const unresolved = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    expect((await checkWebhookUrl('https://not-yet.example.com/x', { allowPrivate: false, resolve: unresolved })).ok).to.equal(true);
  });

  it('classifies addresses: only public unicast is allowed', () => {
    for (const ip of ['8.8.8.8', '2606:4700:4700::1111']) expect(isAllowedAddress(ip, false), ip).to.equal(true);
    for (const ip of ['127.0.0.1', '10.0.0.1', '169.254.169.254', '::1', '::ffff:127.0.0.1', 'fd00::1', '0.0.0.0', '100.64.0.1', '192.0.2.1', 'not-an-ip']) {
      expect(isAllowedAddress(ip, false), ip).to.equal(false);
    }
    expect(isAllowedAddress('127.0.0.1', true)).to.equal(true);
  });
});

describe('webhook secrets and signatures', () => {
  const t = useTestDb();

  it('encrypts secrets with AES-256-GCM bound to the webhook id', () => {
    const keyring = createKeyring(parseSecretKey(generateSecretKeyText()));
    const secret = generateSigningSecret();
    const stored = encryptSecret(keyring, 'wh_A', secret);
    expect(stored).not.to.include(secret);
    expect(decryptSecret(keyring, 'wh_A', stored)).to.equal(secret);
    expect(() => decryptSecret(keyring, 'wh_B', stored)).to.throw();
    const otherKey = createKeyring(parseSecretKey(generateSecretKeyText()));
    expect(() => decryptSecret(otherKey, 'wh_A', stored)).to.throw(/unknown key/);
  });

  it('generates one key per database when none is configured, and keeps it readable once one is', async () => {
    const generated = await loadKeyring(t.db, undefined);
    const again = await loadKeyring(t.db, undefined);
    expect(again.current.id).to.equal(generated.current.id);
    const stored = encryptSecret(generated, 'wh_X', 'whsec_abc');
    const configured = await loadKeyring(t.db, 'ab'.repeat(32));
    expect(configured.current.id).not.to.equal(generated.current.id);
    expect(decryptSecret(configured, 'wh_X', stored)).to.equal('whsec_abc');
  });

  it('signs as Standard Webhooks specifies: v1,base64(HMAC-SHA256(key, id.timestamp.body))', () => {
    const secret = generateSigningSecret();
    const at = new Date('2026-11-21T12:00:00Z');
    const body = '{"type":"webhook.test"}';
    const headers = signatureHeaders(secret, 'msg_1', body, at);
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const expected = createHmac('sha256', key).update(`msg_1.${headers['webhook-timestamp']}.${body}`).digest('base64');
    expect(headers['webhook-signature']).to.equal(`v1,${expected}`);
    expect(headers['webhook-timestamp']).to.equal(String(at.getTime() / 1000));
    // The receiver library rejects it only for age (5 min tolerance), which proves the rest verified.
    expect(() => new Webhook(secret).verify(body, headers)).to.throw(/too old/i);
  });
});
