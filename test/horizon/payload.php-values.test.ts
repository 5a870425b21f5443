/**
 * The values Horizon's code computes, ours against PHP's own (Debian's PHP 8.2 and Laravel 8.83):
 * the prefix its keys get from the environment, the payload its queue writes back (PHP arrays
 * through json_encode), and the times and runtimes as PHP prints and rounds them.
 */
import { describe, expect, it } from 'vitest';
import { horizonPrefix, phpFloatString, phpRound2, phpRuntimeText, phpTimeString, withHorizonAdditions } from '../../src/horizon/index.js';
import { runPhpScript } from '../helpers/php.js';

const php = <T>(mode: string, items: unknown[]): T[] =>
  JSON.parse(runPhpScript('horizon-values.php', JSON.stringify(items), [mode])) as T[];

describe('horizonPrefix', () => {
  const cases: Record<string, string>[] = [
    {},
    { APP_NAME: 'Laravel' },
    { APP_NAME: 'My Shop' },
    { APP_NAME: 'Café Déjà Vu' },
    { APP_NAME: 'null' },
    { APP_NAME: '' },
    { APP_NAME: 'empty' },
    { HORIZON_PREFIX: 'shop-horizon:' },
    { HORIZON_PREFIX: 'custom:', APP_NAME: 'Other' },
    { HORIZON_PREFIX: '' },
    { HORIZON_PREFIX: '0' },
    { HORIZON_PREFIX: 'null', APP_NAME: 'Shop' },
    { HORIZON_PREFIX: '(empty)' },
    { HORIZON_PREFIX: '{horizon}:' },
  ];

  it('is what config/horizon.php and Horizon::use() make of the environment', () => {
    const expected = php<string>(
      'prefix',
      cases.map((env) => ({ env })),
    );
    cases.forEach((env, i) => {
      expect(horizonPrefix({ env: (name) => env[name] }), `env ${JSON.stringify(env)}`).toBe(expected[i]);
    });
  });

  it('takes a given prefix (--horizon-prefix) over the environment', () => {
    expect(horizonPrefix({ prefix: 'given:', env: () => 'ignored' })).toBe('given:');
  });
});

describe('withHorizonAdditions', () => {
  // Payloads as Laravel writes them (raw UTF-8 from 8.82), and as Redis's cjson re-encodes them.
  const payloads = [
    '{"uuid":"u-1","displayName":"App\\\\Jobs\\\\A","data":{"commandName":"App\\\\Jobs\\\\A","command":"O:1:\\"A\\":0:{}"},"id":"u-1","attempts":0}',
    '{"uuid":"u-2","title":"café/東京 \\u2028","id":"random","attempts":0}',
    '{"tags":{},"uuid":"u-3","data":{},"list":{"0":"a","1":"b"},"map":{"1":"a","0":"b"},"id":"u-3","type":"job","attempts":1}',
    '{"uuid":"u-4","n":[1.0,1.5e20,12345678901234567890,1.2345678901235e+16,-0,0.1],"tags":["kept"],"pushedAt":"1.5","id":"x","attempts":0}',
  ];
  const additions = { type: 'job', tags: ['App\\Models\\User:42'], silenced: false, pushedAt: '1795636688.4476' };

  it("writes what Horizon's queue writes: the id made the uuid, the tags appended, PHP arrays through json_encode", () => {
    const expected = php<string>(
      'payload',
      payloads.map((payload) => [payload, additions]),
    );
    payloads.forEach((payload, i) => expect(withHorizonAdditions(payload, additions), `payload ${i}`).toBe(expected[i]));
  });
});

describe('times and runtimes', () => {
  it("prints a time as PHP's (string) cast of microtime(true) does", () => {
    const times = [1795636688.44851, 1795636688.4, -1795636688.44856, 1795636688, 1795636688.99999, 0.1, 1700000000.00004];
    const expected = php<string>('float', times);
    times.forEach((time, i) => expect(phpFloatString(time), `time ${time}`).toBe(expected[i]));
  });

  it("prints the times a worker stamps its records with as PHP's (string) cast of microtime(true) does, quickly", () => {
    // Times of now and of this era's ends, ones a tenth of a millisecond apart, on a half, just
    // beside one, and ones whose last decimals are zeros (PHP drops them).
    let seed = 11;
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const now = Date.now() / 1000;
    const times = [
      ...Array.from({ length: 300 }, () => now + random() * 1e5),
      ...Array.from({ length: 100 }, () => 1e9 + random() * 9e9),
      ...Array.from({ length: 100 }, () => Math.floor(now) + Math.floor(random() * 1e4) / 1e4),
      ...Array.from({ length: 50 }, () => Math.floor(now) + (Math.floor(random() * 1e4) + 0.5) / 1e4),
      ...Array.from({ length: 50 }, () => Math.floor(now) + (Math.floor(random() * 1e4) + 0.5 + (random() - 0.5) * 0.03) / 1e4),
      ...[1e9, 1e9 + 0.00005, 9999999999.99995, 9999999999.9999, 1795636688, 1795636688.1, 1795636688.00005, 999999999.99999, 1e10, 0.1],
    ];
    const expected = php<string>('float', times);
    times.forEach((time, i) => expect(phpTimeString(time), `time ${time}`).toBe(expected[i]));
  });

  it("rounds a runtime as PHP's round($ms, 2) does", () => {
    const runtimes = [1.005, 4.545, 1.2345, 0.125, 2.675, 1000.0049999, 0, 3.14159, 1.115];
    const expected = php<number>('round', runtimes);
    runtimes.forEach((ms, i) => expect(phpRound2(ms), `runtime ${ms}`).toBe(expected[i]));
  });

  it("writes a worker's runtimes as Horizon's records hold them: (string) round($ms, 2), for runtimes of every size and halves", () => {
    // Runtimes as performance.now() differences give them, halves and their near neighbours (where
    // PHP's pre-rounding decides), and the sizes where the quick ways give way to PHP's rules.
    let seed = 7;
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const runtimes = [
      ...Array.from({ length: 400 }, () => random() * 10 ** Math.floor(random() * 7)),
      ...Array.from({ length: 200 }, () => Math.floor(random() * 1e6) / 1000 + 0.005),
      ...Array.from({ length: 100 }, () => (Math.floor(random() * 1e5) + 0.5) / 100 + (random() - 0.5) * 1e-9),
      ...[0, -1, 0.004, 0.005, 0.015, 1.005, 2.675, 9999.995, 10000.005, 123456.785, 999999999999.994, 1e12 + 0.125],
    ];
    const rounded = php<number>(
      'round',
      runtimes.map((ms) => Math.max(0, ms)),
    );
    const expected = php<string>('float', rounded);
    runtimes.forEach((ms, i) => {
      expect(phpRound2(Math.max(0, ms)), `round(${ms}, 2)`).toBe(rounded[i]);
      expect(phpRuntimeText(ms), `runtime ${ms}`).toBe(expected[i]);
    });
  });
});
