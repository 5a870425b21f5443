/**
 * The files the code once read from disk at run time (the Lua steps, the JSON Schemas) are built
 * into its modules, so a bundled service carries them: what the modules hold is what the files
 * say, and scripts/embed.mjs finds the committed modules current.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { luaSource, type StepName } from '../../src/redis/index.js';
import { schemaFor } from '../../src/laravel/index.js';
import { shapesSchema } from '../../src/shapes/index.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('built-in run-time files', () => {
  it('each Lua step is its file in src/redis/lua/, byte for byte', () => {
    const steps: [StepName, string][] = [
      ['lqbPushMany', 'push-many.lua'],
      ['lqbReserve', 'reserve.lua'],
      ['lqbRelease', 'release.lua'],
      ['lqbDelete', 'delete.lua'],
      ['lqbGiveBack', 'give-back.lua'],
      ['lqbSize', 'size.lua'],
      ['lqbClear', 'clear.lua'],
      ['lqbReleaseLock', 'release-lock.lua'],
      ['lqbPushOnce', 'push-once.lua'],
      ['lqbPushOnceMany', 'push-once-many.lua'],
      ['lqbFindList', 'find-list.lua'],
      ['lqbFindZset', 'find-zset.lua'],
      ['lqbRenew', 'renew.lua'],
      ['lqbReclaim', 'reclaim.lua'],
      ['lqbPageEnds', 'page-ends.lua'],
    ];
    expect(steps.map(([, file]) => file).sort(), 'the Lua files on disk').toEqual(readdirSync(join(root, 'src/redis/lua')).sort());
    for (const [step, file] of steps)
      expect(luaSource(step), `the built-in ${file}`).toBe(readFileSync(join(root, 'src/redis/lua', file), 'utf8'));
  });

  it('the schemas are those of schemas/', () => {
    expect(schemaFor('8'), 'payload-8.json').toEqual(JSON.parse(readFileSync(join(root, 'schemas/payload-8.json'), 'utf8')));
    expect(shapesSchema(), 'shapes.schema.json').toEqual(JSON.parse(readFileSync(join(root, 'schemas/shapes.schema.json'), 'utf8')));
  });

  it('scripts/embed.mjs --check finds the committed modules current', () => {
    const check = spawnSync(process.execPath, ['scripts/embed.mjs', '--check'], { cwd: root, encoding: 'utf8' });
    expect(check.stderr, 'what embed.mjs --check said').toBe('');
    expect(check.status).toBe(0);
  });
});
