/**
 * A passkey (WebAuthn P-256 credential) that signs on this machine: viem's toWebAuthnAccount over
 * a software authenticator, the `getFn` it takes in place of the browser's
 * navigator.credentials.get. The authenticator answers an assertion request as a platform
 * authenticator does — authenticatorData (rpIdHash ‖ flags user-present and user-verified ‖ a zero
 * sign count), the clientDataJSON of a "webauthn.get" with the challenge, and an ES256 signature
 * over authenticatorData ‖ sha256(clientDataJSON), DER-encoded, its s made low (webauthn-sol, which
 * Coinbase Smart Wallet verifies with, refuses a high s).
 */
import { createECDH, createHash, createPrivateKey, sign } from 'node:crypto';
import type { Hex } from 'viem';
import { toWebAuthnAccount, type WebAuthnAccount } from 'viem/account-abstraction';

const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const RP_ID = 'opscan.devnet';

const sha256 = (data: Uint8Array | string): Buffer => createHash('sha256').update(data).digest();

/** ASN.1 DER of an ECDSA signature: SEQUENCE { INTEGER r, INTEGER s }. */
function derSignature(r: bigint, s: bigint): Buffer {
  const integer = (n: bigint): Buffer => {
    let bytes = Buffer.from(n.toString(16).padStart(64, '0'), 'hex');
    while (bytes.length > 1 && bytes[0] === 0 && bytes[1]! < 0x80) bytes = bytes.subarray(1);
    if (bytes[0]! >= 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
    return Buffer.concat([Buffer.from([0x02, bytes.length]), bytes]);
  };
  const body = Buffer.concat([integer(r), integer(s)]);
  return Buffer.concat([Buffer.from([0x30, body.length]), body]);
}

/** The passkey whose P-256 private key is `privateKey` (32 bytes), as viem's WebAuthnAccount. */
export function toLocalPasskey(privateKey: Hex): WebAuthnAccount {
  const d = Buffer.from(privateKey.slice(2), 'hex');
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(d);
  const point = ecdh.getPublicKey(); // 0x04 ‖ x ‖ y
  const jwk = {
    kty: 'EC',
    crv: 'P-256',
    d: d.toString('base64url'),
    x: point.subarray(1, 33).toString('base64url'),
    y: point.subarray(33).toString('base64url'),
  };
  const key = createPrivateKey({ key: jwk, format: 'jwk' });
  const id = sha256(point).subarray(0, 16).toString('base64url');
  const getFn = (options?: { publicKey?: { challenge?: unknown; rpId?: string } }) => {
    const request = options?.publicKey;
    const challenge = Buffer.from(request!.challenge as Uint8Array);
    const rpId = request!.rpId ?? RP_ID;
    const authenticatorData = Buffer.concat([sha256(rpId), Buffer.from([0x05, 0, 0, 0, 0])]);
    const clientDataJSON = Buffer.from(
      JSON.stringify({ type: 'webauthn.get', challenge: challenge.toString('base64url'), origin: `https://${rpId}`, crossOrigin: false }),
    );
    const raw = sign('sha256', Buffer.concat([authenticatorData, sha256(clientDataJSON)]), { key, dsaEncoding: 'ieee-p1363' });
    const r = BigInt(`0x${raw.subarray(0, 32).toString('hex')}`);
    const s = BigInt(`0x${raw.subarray(32).toString('hex')}`);
    const signature = derSignature(r, s > P256_N / 2n ? P256_N - s : s);
    return Promise.resolve({
      id,
      type: 'public-key',
      response: { authenticatorData, clientDataJSON, signature },
    } as never);
  };
  return toWebAuthnAccount({ credential: { id, publicKey: `0x${point.subarray(1).toString('hex')}` }, getFn, rpId: RP_ID });
}
