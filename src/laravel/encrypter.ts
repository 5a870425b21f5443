/**
 * Laravel's Encrypter format, for ShouldBeEncrypted jobs: base64 of the JSON
 * `{"iv","value","mac","tag"}`, where `value` is the base64 ciphertext of the serialized data.
 * CBC ciphers carry an HMAC-SHA256 of `iv . value` in `mac`; GCM ciphers carry their
 * authentication tag in `tag` and leave `mac` empty.
 *
 * A queued job's `data.command` is `encrypt(serialize($job))`, and `encrypt` serializes once
 * more: decrypting gives a serialized string whose content is the serialized command.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { serialize, unserialize, type PhpValue } from '../php/index.js';

export type Cipher = 'AES-128-CBC' | 'AES-256-CBC' | 'AES-128-GCM' | 'AES-256-GCM';

const CIPHERS: Record<Cipher, { keyLength: number; aead: boolean; node: string }> = {
  'AES-128-CBC': { keyLength: 16, aead: false, node: 'aes-128-cbc' },
  'AES-256-CBC': { keyLength: 32, aead: false, node: 'aes-256-cbc' },
  'AES-128-GCM': { keyLength: 16, aead: true, node: 'aes-128-gcm' },
  'AES-256-GCM': { keyLength: 32, aead: true, node: 'aes-256-gcm' },
};

/** True for a cipher the Encrypter takes (in any letter case), so a bad one is refused before any key is at hand. */
export function supportsCipher(cipher: string): boolean {
  return cipher.toUpperCase() in CIPHERS;
}

/** Decryption failed: a wrong key, a bad MAC or tag, or a payload that is not Encrypter output. */
export class DecryptError extends Error {
  override name = 'DecryptError';
}

export class Encrypter {
  private readonly key: Buffer;
  readonly cipher: Cipher;

  /**
   * `key` as Laravel's APP_KEY (`base64:…`) or the raw key bytes. `iv` gives each encryption's IV
   * of the length asked (a test's, to compare bytes); random by default, as Laravel's.
   */
  constructor(
    key: string | Uint8Array,
    cipher: string = 'AES-256-CBC',
    private readonly iv: (length: number) => Uint8Array = randomBytes,
  ) {
    const normal = cipher.toUpperCase() as Cipher;
    if (!(normal in CIPHERS)) throw new Error(`unsupported cipher ${cipher} (supported: ${Object.keys(CIPHERS).join(', ')})`);
    this.cipher = normal;
    this.key = typeof key === 'string' ? parseAppKey(key) : Buffer.from(key);
    const wanted = CIPHERS[normal].keyLength;
    if (this.key.length !== wanted) throw new Error(`${normal} needs a ${wanted}-byte key, this one has ${this.key.length} bytes`);
  }

  /** Encrypts bytes as Laravel does; with `serializeFirst` (Laravel's default) they are serialized first. */
  encrypt(value: string | Uint8Array, serializeFirst = true): string {
    const spec = CIPHERS[this.cipher];
    const plain = serializeFirst ? serialize(typeof value === 'string' ? value : Buffer.from(value)) : Buffer.from(value);
    const iv = Buffer.from(this.iv(spec.aead ? 12 : 16));
    const cipher = createCipheriv(spec.node, this.key, iv) as ReturnType<typeof createCipheriv> & { getAuthTag?: () => Buffer };
    const encrypted = Buffer.concat([cipher.update(plain), cipher.final()]).toString('base64');
    const ivText = iv.toString('base64');
    const tag = spec.aead ? cipher.getAuthTag!().toString('base64') : '';
    const mac = spec.aead ? '' : this.mac(ivText, encrypted);
    // json_encode with JSON_UNESCAPED_SLASHES: base64 and hex need no escaping at all.
    return Buffer.from(JSON.stringify({ iv: ivText, value: encrypted, mac, tag })).toString('base64');
  }

  /** Decrypts Encrypter output to bytes; with `unserializeAfter` (the default) the bytes are unserialized. */
  decrypt(payload: string): PhpValue;
  decrypt(payload: string, unserializeAfter: false): Buffer;
  decrypt(payload: string, unserializeAfter = true): PhpValue | Buffer {
    const spec = CIPHERS[this.cipher];
    const fields = readEnvelope(payload);
    const iv = Buffer.from(fields.iv, 'base64');
    if (iv.length !== (spec.aead ? 12 : 16))
      throw new DecryptError(`the iv is ${iv.length} bytes, ${this.cipher} uses ${spec.aead ? 12 : 16}`);
    if (!spec.aead && !this.validMac(fields)) throw new DecryptError('the MAC is invalid: a wrong key, or the payload was changed');
    const decipher = createDecipheriv(spec.node, this.key, iv) as ReturnType<typeof createDecipheriv> & {
      setAuthTag?: (tag: Buffer) => void;
    };
    if (spec.aead) {
      const tag = Buffer.from(fields.tag ?? '', 'base64');
      if (tag.length !== 16) throw new DecryptError('the GCM tag is missing or not 16 bytes');
      decipher.setAuthTag!(tag);
    }
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(Buffer.from(fields.value, 'base64')), decipher.final()]);
    } catch {
      throw new DecryptError(
        spec.aead ? 'the GCM tag does not match: a wrong key, or the payload was changed' : 'could not decrypt the data',
      );
    }
    return unserializeAfter ? unserialize(plain) : plain;
  }

  /** A ShouldBeEncrypted job's `data.command` back to the command itself. */
  decryptCommand(command: string): PhpValue {
    const inner = this.decrypt(command);
    if (typeof inner !== 'string' && !(inner instanceof Uint8Array))
      throw new DecryptError('decrypted data is not the serialized command Laravel writes');
    return unserialize(inner);
  }

  /** What Laravel writes as an encrypted job's `data.command`, from the command's serialized bytes. */
  encryptCommand(serializedCommand: string | Uint8Array): string {
    return this.encrypt(serializedCommand, true);
  }

  /**
   * The signature laravel/serializable-closure's Hmac signer gives a serialized closure under
   * this key (EncryptionServiceProvider hands it the same APP_KEY): base64 of HMAC-SHA256.
   */
  signClosure(serialized: string): string {
    return createHmac('sha256', this.key).update(serialized).digest('base64');
  }

  private mac(iv: string, value: string): string {
    return createHmac('sha256', this.key)
      .update(iv + value)
      .digest('hex');
  }

  private validMac(fields: EncryptedFields): boolean {
    const expected = Buffer.from(this.mac(fields.iv, fields.value));
    const given = Buffer.from(fields.mac ?? '');
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}

interface EncryptedFields {
  iv: string;
  value: string;
  mac?: string;
  tag?: string;
}

function readEnvelope(payload: string): EncryptedFields {
  let fields: unknown;
  try {
    fields = JSON.parse(Buffer.from(payload, 'base64').toString('utf8'));
  } catch {
    throw new DecryptError('the payload is not Encrypter output (base64 of JSON)');
  }
  const f = fields as Partial<EncryptedFields> | null;
  if (!f || typeof f.iv !== 'string' || typeof f.value !== 'string' || (f.mac !== undefined && typeof f.mac !== 'string')) {
    throw new DecryptError('the payload is not Encrypter output: iv, value or mac missing');
  }
  return f as EncryptedFields;
}

/** Laravel's APP_KEY: `base64:` and the key, or the key's bytes as they are. */
export function parseAppKey(appKey: string): Buffer {
  return appKey.startsWith('base64:') ? Buffer.from(appKey.slice(7), 'base64') : Buffer.from(appKey, 'utf8');
}
