/**
 * The app's APP_KEY and cipher, checked once, when the connection is made: a key of the wrong
 * length, or a cipher Laravel does not have, is refused then (even with no key yet to use it),
 * not as a failure of each encrypted job later. `connect()` and `lqb` both check here.
 */
import { Encrypter, supportsCipher } from '../laravel/index.js';
import { ConnectionSettingsError, type ConnectionSettings } from './settings.js';

/** What the caller calls the two settings in its errors (an option, a flag, an environment variable). */
export interface AppKeyNames {
  key: string;
  cipher: string;
}

/**
 * The Encrypter for encrypted jobs, or undefined when there is no key. A refusal is a
 * ConnectionSettingsError naming the setting, never the key.
 */
export function appEncrypter(settings: Pick<ConnectionSettings, 'appKey' | 'cipher'>, names: AppKeyNames): Encrypter | undefined {
  if (!supportsCipher(settings.cipher))
    throw new ConnectionSettingsError(
      `${names.cipher}: unsupported cipher ${JSON.stringify(settings.cipher)} (supported: AES-128-CBC, AES-256-CBC, AES-128-GCM, AES-256-GCM)`,
    );
  if (!settings.appKey) return undefined;
  try {
    return new Encrypter(settings.appKey, settings.cipher);
  } catch (error) {
    throw new ConnectionSettingsError(`${names.key}: ${(error as Error).message}`);
  }
}
