/**
 * The differential test of translated methods: `lqb shapes` (reflect.php with Debian's real PHP
 * and Laravel 8.83) translates methods-app's uniqueId(), backoff(), retryUntil(), tags() and
 * displayName(); PHP calls each real method on hundreds of generated instances (random property
 * values, models through SerializesModels) and Laravel's own Queue methods turn the result into
 * what the envelope carries; Node evaluates the translation on the same serialized command and
 * must give the same value, or refuse where PHP could not give one.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PhpObject, deref, toJS, unserialize } from '../../src/php/index.js';
import { reflectShapes } from '../../src/shapes/reflect.js';
import {
  ExpressionError,
  backoffOfValue,
  evaluate,
  jsonOfValue,
  retryUntilOfValue,
  translatedMethod,
  uniqueIdOfValue,
} from '../../src/shapes/expression.js';
import type { TranslatedMethod } from '../../src/shapes/shape.js';
import { root, runPhpScript } from '../helpers/php.js';

const APP = join(root, 'php-fixture-gen/methods-app');
const NOW = 1_700_000_000;
const METHODS: TranslatedMethod[] = ['uniqueId', 'backoff', 'retryUntil', 'displayName', 'tags'];

interface Sample {
  class: string;
  serialized: string;
  results: Record<TranslatedMethod, { value: string } | { error: string }>;
}

/** What Laravel writes of each method's result, from Node's evaluation. */
const written: Record<TranslatedMethod, (value: ReturnType<typeof evaluate>) => unknown> = {
  uniqueId: uniqueIdOfValue,
  backoff: (value) => backoffOfValue(value, NOW),
  retryUntil: retryUntilOfValue,
  displayName: jsonOfValue,
  tags: jsonOfValue,
};

describe('translated methods give what PHP gives (methods-app, Laravel 8.83)', async () => {
  const shapes = await reflectShapes({ app: APP });
  const samples = runPhpScript('methods-differential.php', '', ['150', '21', String(NOW)])
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Sample);

  it('translates every method of ReserveProduct, SyncPrice, Literals, TypedReturns, StrictReturns and NullableProduct', () => {
    for (const name of [
      'App\\Jobs\\ReserveProduct',
      'App\\Jobs\\SyncPrice',
      'App\\Jobs\\Literals',
      'App\\Jobs\\TypedReturns',
      'App\\Jobs\\StrictReturns',
      'App\\Jobs\\NullableProduct',
    ]) {
      for (const method of METHODS)
        expect(translatedMethod(shapes.classes[name], method), `${name}::${method}()`).toHaveProperty('expression');
    }
  });

  it('leaves the other bodies untranslated, each with its reason', () => {
    const shape = shapes.classes['App\\Jobs\\Untranslatable'];
    expect(shape?.expressions).toEqual({
      uniqueId: { untranslated: 'it calls or names md5, which is not translated' },
      backoff: { untranslated: 'its body is not a single return statement' },
      retryUntil: { untranslated: 'it calls now()->addMinutes() with other than an int literal' },
      tags: { untranslated: "it reads $this->product->name, which the payload's ModelIdentifier does not carry (only the key)" },
      displayName: { untranslated: 'it calls $this->helper()' },
    });
  });

  it(`gives PHP's value for every generated instance (${METHODS.join(', ')})`, () => {
    expect(samples.length).toBe(900);
    let compared = 0;
    for (const [index, sample] of samples.entries()) {
      const command = deref(unserialize(sample.serialized));
      if (!(command instanceof PhpObject)) throw new Error(`sample ${index} is not an object`);
      for (const method of METHODS) {
        const found = translatedMethod(shapes.classes[sample.class], method);
        if (!found || !('expression' in found)) throw new Error(`${sample.class}::${method}() is not translated`);
        const where = `${sample.class}::${method}() on sample ${index} (${JSON.stringify(sample.serialized)})`;
        const php = sample.results[method];
        let node: unknown;
        try {
          node = written[method](evaluate(found.expression, command, { now: NOW }));
        } catch (error) {
          if (!(error instanceof ExpressionError)) throw error;
          node = { refused: error.message };
        }
        if ('error' in php) {
          // PHP could not give a value (a warning, a TypeError): Node must not invent one.
          expect(node, `${where}: PHP said ${php.error}`).toHaveProperty('refused');
        } else {
          expect(node, where).toEqual(toJS(unserialize(php.value)));
          compared++;
        }
      }
    }
    // Nearly every sample gives a value: the comparison is not of refusals.
    expect(compared).toBeGreaterThan(2100);
  });
});
