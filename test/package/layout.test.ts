/**
 * The test tree mirrors src/ (DESIGN.md: "A test file mirrors the file it tests"): a test of
 * src/<folder>/<Module>.ts is test/<folder>/<Module>.test.ts, or <Module>.<aspect>.test.ts when
 * one module has several, so a module's tests are found from its name and a test's module from
 * its. Folders that test no one module are exempt: e2e (across languages), reliability (its own
 * tier), package (the package as a whole, this file too) and helpers. Also: every file the unit
 * tier lists exists, so a rename cannot drop one from it unseen.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { unitFiles } from '../../vitest.config.js';
import { root } from '../helpers/php.js';

const EXEMPT = ['e2e', 'reliability', 'package', 'helpers'];

/**
 * Tests of a module being rewritten on another branch (issue 24), named for it once that lands:
 * both test what CallQueuedHandler.ts does with a finished job (the chain's next link, a batch's
 * callbacks).
 */
const PENDING = new Set(['test/shapes/worker.test.ts', 'test/worker/batch-callbacks.test.ts']);

/** Every *.test.ts under dir, as paths relative to the repository, with forward slashes. */
function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [relative(root, path).split(sep).join('/')] : [];
  });
}

/** The source file a test file mirrors: test/a/b/M.aspect.test.ts tests src/a/b/M.ts. */
function mirroredModule(testFile: string): string {
  const parts = testFile.split('/').slice(1);
  const name = parts.pop()!;
  return ['src', ...parts, `${name.split('.')[0]}.ts`].join('/');
}

describe('test files mirror the modules they test', () => {
  it('each test file outside the exempt folders is named for a file of src/', () => {
    const mirrored = testFiles(join(root, 'test')).filter((file) => !EXEMPT.includes(file.split('/')[1]!) && !PENDING.has(file));
    expect(mirrored.length, 'test files found under test/').toBeGreaterThan(0);
    const orphans = mirrored
      .filter((file) => !existsSync(join(root, mirroredModule(file))))
      .map((file) => `${file} (no ${mirroredModule(file)})`);
    expect(orphans, 'test files named for no module: rename them <Module>.<aspect>.test.ts').toEqual([]);
  });

  it('the files waiting for a rename still exist, and still match no module', () => {
    for (const file of PENDING) {
      expect(existsSync(join(root, file)), `${file}: listed in PENDING but gone; take it out`).toBe(true);
      expect(existsSync(join(root, mirroredModule(file))), `${file}: now mirrors a module; take it out of PENDING`).toBe(false);
    }
  });
});

describe('the unit tier', () => {
  it('lists only files that exist', () => {
    const missing = unitFiles.filter((file) => !existsSync(join(root, file)));
    expect(missing, 'files in vitest.config.ts’s unitFiles that are not there').toEqual([]);
  });
});
