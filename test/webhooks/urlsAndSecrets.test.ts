import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { createHmac } from 'node:crypto';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { checkWebhookUrl, isAllowedAddress } from '../../shared/webhookUrls.js';
import {
  createKeyring,
  decryptSecret,
  encryptSecret,
  generateSecretKeyText,
  generateSigningSecret,
  parseSecretKey,
} from '../../shared/webhookSecrets.js';
import { loadKeyring } from '../../shared/webhookKeyring.js';
import { createGuardedAgent } from '../../webhooks/guardedAgent.js';
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
    expect(
      (await checkWebhookUrl('https://hooks.example.com/x', { allowPrivate: false, resolve: resolveTo(['93.184.216.34']) })).ok,
    ).to.equal(true);
    const unresolved = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    expect((await checkWebhookUrl('https://not-yet.example.com/x', { allowPrivate: false, resolve: unresolved })).ok).to.equal(true);
  });

  it('classifies addresses: only public unicast is allowed', () => {
    for (const ip of ['8.8.8.8', '2606:4700:4700::1111']) expect(isAllowedAddress(ip, false), ip).to.equal(true);
    for (const ip of [
      '127.0.0.1',
      '10.0.0.1',
      '169.254.169.254',
      '::1',
      '::ffff:127.0.0.1',
      'fd00::1',
      '0.0.0.0',
      '100.64.0.1',
      '192.0.2.1',
      'not-an-ip',
    ]) {
      expect(isAllowedAddress(ip, false), ip).to.equal(false);
    }
    expect(isAllowedAddress('127.0.0.1', true)).to.equal(true);
  });
});

/** 32 bits as two 16-bit hex groups, optionally inverted (Teredo's client address). */
function groups(ipv4: string, invert = false): [string, string] {
  const n = ipv4.split('.').reduce((acc, o) => acc * 256 + Number(o), 0) ^ (invert ? 0xffffffff : 0);
  const u = n >>> 0;
  return [(u >>> 16).toString(16), (u & 0xffff).toString(16)];
}
const pad = (group: string) => group.padStart(4, '0');

/**
 * Every IPv6 spelling that carries `ipv4`: IPv4-compatible (::/96), IPv4-mapped, NAT64 (64:ff9b::/96
 * and the local-use 64:ff9b:1::/48 at its /96 and /48 positions), 6to4 and Teredo (client and server);
 * each compressed, fully expanded, in mixed dotted notation where the form allows it, and upper case.
 */
function ipv6SpellingsOf(ipv4: string, publicPeer = '8.8.8.8'): string[] {
  const [hi, lo] = groups(ipv4);
  const [peerHi, peerLo] = groups(publicPeer);
  const [invHi, invLo] = groups(ipv4, true);
  const [peerInvHi, peerInvLo] = groups(publicPeer, true);
  const octets = ipv4
    .split('.')
    .map(Number)
    .map((o) => o.toString(16).padStart(2, '0'));
  const forms = [
    `::${ipv4}`,
    `::${hi}:${lo}`,
    `0:0:0:0:0:0:${hi}:${lo}`,
    `0000:0000:0000:0000:0000:0000:${pad(hi)}:${pad(lo)}`,
    `0:0:0:0:0:0:${ipv4}`,
    `::ffff:${ipv4}`,
    `::ffff:${hi}:${lo}`,
    `::ffff:0:${ipv4}`,
    `64:ff9b::${ipv4}`,
    `64:ff9b::${hi}:${lo}`,
    `0064:ff9b:0000:0000:0000:0000:${pad(hi)}:${pad(lo)}`,
    `64:ff9b:1::${hi}:${lo}`,
    `64:ff9b:1:${octets[0]}${octets[1]}:${octets[2]}:${octets[3]}00::`, // the /48 position: bits 48–64 and 72–88
    `2002:${hi}:${lo}::`,
    `2002:${pad(hi)}:${pad(lo)}:0000:0000:0000:0000:0001`,
    `2002:${hi}:${lo}:1::${peerHi}:${peerLo}`,
    `2001:0:${peerHi}:${peerLo}::${invHi}:${invLo}`, // Teredo client (inverted), public server
    `2001:0000:${pad(hi)}:${pad(lo)}:0000:0000:${pad(peerInvHi)}:${pad(peerInvLo)}`, // Teredo server, public client
  ];
  return [...forms, ...forms.map((f) => f.toUpperCase())];
}

describe('webhook URL policy: IPv6 addresses embedding an IPv4', () => {
  const PRIVATE = ['127.0.0.1', '169.254.169.254', '10.0.0.1', '192.168.1.20', '172.16.5.4', '100.64.0.1', '0.0.0.0'];
  const PUBLIC = ['8.8.8.8', '93.184.216.34'];

  it('refuses IPv4-compatible spellings of private addresses: [::127.0.0.1], [::169.254.169.254], [::10.0.0.1]', async () => {
    for (const url of ['https://[::127.0.0.1]/', 'https://[::169.254.169.254]/', 'https://[::10.0.0.1]/']) {
      const verdict = await checkWebhookUrl(url, { allowPrivate: false });
      expect(verdict.ok, url).to.equal(false);
      if (!verdict.ok) expect(verdict.reason).to.match(/private, loopback or link-local/);
    }
  });

  it('judges every spelling by the IPv4 it embeds, at creation and as a connect-time address', async () => {
    for (const ipv4 of PRIVATE) {
      for (const ip of ipv6SpellingsOf(ipv4)) {
        expect(isAllowedAddress(ip, false), `${ip} embeds ${ipv4}`).to.equal(false);
        expect(isAllowedAddress(`${ip}%eth0`, false), `${ip}%eth0`).to.equal(false);
        expect((await checkWebhookUrl(`https://[${ip}]/hook`, { allowPrivate: false })).ok, `https://[${ip}]/`).to.equal(false);
        const named = await checkWebhookUrl('https://hooks.example.com/x', { allowPrivate: false, resolve: async () => [ip] });
        expect(named.ok, `a name resolving to ${ip}`).to.equal(false);
      }
    }
    // The same forms around a public IPv4 are that public address (a NAT64 gateway, a 6to4 relay),
    // except local-use NAT64, whose IPv4 position depends on the operator's prefix length: there every
    // reading must be public, which the zeros of a /96-style address are not.
    for (const ipv4 of PUBLIC) {
      for (const ip of ipv6SpellingsOf(ipv4, ipv4).filter((f) => !/^64:ff9b:1:/i.test(f))) {
        expect(isAllowedAddress(ip, false), `${ip} embeds ${ipv4}`).to.equal(true);
        expect((await checkWebhookUrl(`https://[${ip}]/hook`, { allowPrivate: false })).ok, `https://[${ip}]/`).to.equal(true);
      }
    }
    expect(isAllowedAddress('64:ff9b:1::808:808', false), 'local-use NAT64, ambiguous').to.equal(false);
    // A zone id scopes a link-local address: never public, whatever follows it.
    expect(isAllowedAddress('2606:4700:4700::1111%eth0', false)).to.equal(false);
    expect(isAllowedAddress('fe80::1%25eth0', false)).to.equal(false);
  });

  it('the dispatcher refuses to connect to them (literal hosts and names resolving to them)', async () => {
    // A TLS server on loopback that must never be reached: the refusal comes before the connection.
    let reached = 0;
    const server = createServer((_req, res) => {
      reached++;
      res.end('reached');
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;
    const refusalOf = async (url: string, resolvesTo?: string) => {
      const agent = createGuardedAgent({
        allowPrivate: false,
        responseTimeoutMs: 2000,
        ...(resolvesTo ? { resolve: async () => [resolvesTo] } : {}),
      });
      try {
        await request(url, { dispatcher: agent, method: 'POST', body: '{}' });
        return 'connected';
      } catch (err) {
        return (err as Error).name;
      } finally {
        await agent.close();
      }
    };
    try {
      for (const host of ['[::127.0.0.1]', '[::7f00:1]', '[64:ff9b::7f00:1]', '[2002:7f00:1::]', '[::169.254.169.254]']) {
        expect(await refusalOf(`https://${host}:${port}/hook`), host).to.equal('BlockedAddressError');
      }
      for (const address of ['::7f00:1', '0:0:0:0:0:0:127.0.0.1', '64:ff9b:1::a00:1', '2001:0:808:808::80ff:fffe', '::7F00:1%lo']) {
        expect(await refusalOf(`https://hooks.example.com:${port}/hook`, address), address).to.equal('BlockedAddressError');
      }
      expect(reached).to.equal(0);
    } finally {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    }
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
