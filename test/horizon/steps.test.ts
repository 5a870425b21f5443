/**
 * Horizon's Lua steps are the files in src/horizon/lua/, built into the module byte for byte
 * (scripts/embed.mjs), and each file is a step the recorder can run.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HORIZON_LUA_FILES } from '../../src/horizon/lua.generated.js';
import { HORIZON_STEP_FILES } from '../../src/horizon/steps.js';
import { root } from '../helpers/php.js';

const dir = join(root, 'src/horizon/lua');

describe("Horizon's Lua steps", () => {
  it('each is its file in src/horizon/lua/, byte for byte, with its KEYS and ARGV named at the top', () => {
    const files = readdirSync(dir).sort();
    expect(Object.values(HORIZON_STEP_FILES).sort(), 'the steps’ files').toEqual(files);
    expect(Object.keys(HORIZON_LUA_FILES).sort(), 'the built-in files').toEqual(files);
    for (const file of files) {
      const text = readFileSync(join(dir, file), 'utf8');
      expect(HORIZON_LUA_FILES[file], `the built-in ${file}`).toBe(text);
      expect(text, `${file} names its KEYS`).toMatch(/^-- KEYS/m);
    }
  });
});
