/**
 * The views of values.ts against what real Laravel 8.83 (Debian's) puts in a command.
 */
import { describe, expect, it } from 'vitest';
import { asModelIdentifier } from '../../src/laravel/index.js';
import { unserialize, type PhpArray } from '../../src/php/index.js';
import { php, root } from '../helpers/php.js';

describe('asModelIdentifier', () => {
  it('gives a collection (filtered or not), and a model, as SerializesModels stored them, with their keys', () => {
    // A filtered collection keeps its keys, so Laravel stores its ids as [1 => 2, 3 => 4]: it
    // still restores them as a collection, of the models whose keys are the array's values.
    const out = JSON.parse(
      php(`require '${root}php-fixture-gen/laravel-app.php';
        ['db' => $db] = laravel_app();
        laravel_migrate($db);
        foreach (['a', 'b', 'c', 'd'] as $n) App\\Models\\User::create(['name' => $n, 'email' => "$n@x"]);
        $models = new class { use Illuminate\\Queue\\SerializesAndRestoresModelIdentifiers; function stored($v) { return $this->getSerializedPropertyValue($v); } };
        $even = App\\Models\\User::all()->filter(fn ($u) => $u->id % 2 === 0);
        $all = App\\Models\\User::all();
        $one = App\\Models\\User::find(3);
        echo json_encode([
          'bytes' => base64_encode(serialize([$models->stored($even), $models->stored($all), $models->stored($one)])),
          'keys' => [array_values($even->modelKeys()), $all->modelKeys(), $one->getKey()],
        ]);`).toString(),
    ) as { bytes: string; keys: [number[], number[], number] };
    const stored = (unserialize(Buffer.from(out.bytes, 'base64')) as PhpArray).values.map((value) => asModelIdentifier(value)!);
    expect(stored.map((model) => model.id)).toEqual(out.keys);
    expect(stored.map((model) => model.isCollection)).toEqual([true, true, false]);
    expect(stored.map((model) => model.class)).toEqual(['App\\Models\\User', 'App\\Models\\User', 'App\\Models\\User']);
  });
});
