/**
 * `lqb port` on every job and queued-listener class of real Laravel 12 and 13 apps, each a folder
 * with its vendor/ (the framework at that version), app/ and .env, built outside this repository
 * (CI has none): each module is written into a scratch project whose
 * `laravel-queue-bridge` is this repository, compiled with `tsc --strict`, and its test run with
 * vitest. Prints one JSON line a class, {laravel, class, payload}: the payload the app's own PHP
 * made for it (lqb fixtures, from the sample values lqb port uses), which
 * fixtures/laravel/port-12-13.jsonl keeps for runJob's differential test in CI; and a summary line a
 * runtime on standard error. Exits 1 when a module does not compile or a test does not pass.
 *
 *   npm run build && npx tsx php-fixture-gen/live/port-live.ts APP_12_DIR APP_13_DIR > fixtures/laravel/port-12-13.jsonl
 *
 * Not run by CI (it has no such app).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { appFixtures } from '../../src/fixtures/index.js';
import { sampleProps } from '../../src/port/index.js';
import { readShapes } from '../../src/shapes/read.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const lqb = (args: string[]) => spawnSync(process.execPath, [join(root, 'dist/cli/main.js'), ...args], { encoding: 'utf8' });

async function portAll(app: string): Promise<boolean> {
  const dir = mkdtempSync(join(tmpdir(), 'lqb-port-live-'));
  try {
    const modules = join(dir, 'node_modules');
    mkdirSync(modules);
    for (const entry of readdirSync(join(root, 'node_modules'))) symlinkSync(join(root, 'node_modules', entry), join(modules, entry));
    symlinkSync(root, join(modules, 'laravel-queue-bridge'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    const shapesFile = join(dir, 'shapes.json');
    const shaped = lqb(['shapes', `--app=${app}`, `--out=${shapesFile}`]);
    if (shaped.status !== 0) throw new Error(`lqb shapes --app=${app}: ${shaped.stderr}`);
    const shapes = readShapes(shapesFile);
    const classes = Object.values(shapes.classes).filter((shape) => shape.kind === 'job' || shape.kind === 'listener');
    let ok = true;
    for (const shape of classes) {
      const ported = lqb(['port', shape.name, `--app=${app}`, `--out=${dir}`]);
      if (ported.status !== 0) {
        console.error(`${app}: lqb port ${shape.name}: ${ported.stderr.trim()}`);
        ok = false;
        continue;
      }
      const [made] = await appFixtures({ app, className: shape.name, props: sampleProps(shape, shapes) });
      console.log(JSON.stringify({ laravel: shapes.laravel, class: shape.name, payload: made!.payload }));
    }
    const files = readdirSync(dir).filter((file) => file.endsWith('.ts'));
    const tsc = spawnSync(
      process.execPath,
      [join(root, 'node_modules/typescript/bin/tsc'), '--strict', '--noEmit', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--skipLibCheck', ...files],
      { cwd: dir, encoding: 'utf8' },
    );
    if (tsc.status !== 0) {
      console.error(`${app}: tsc --strict: ${tsc.stdout}${tsc.stderr}`);
      ok = false;
    }
    spawnSync(process.execPath, [join(root, 'node_modules/vitest/vitest.mjs'), 'run', '--reporter=json', `--outputFile=${join(dir, 'report.json')}`], {
      cwd: dir,
      encoding: 'utf8',
    });
    const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as { testResults: { name: string; status: string; message: string }[] };
    const failed = report.testResults.filter((file) => file.status !== 'passed');
    for (const file of failed) console.error(`${app}: ${file.name}: ${file.message}`);
    console.error(
      `${app} (Laravel ${shapes.laravel}): ${classes.length} classes ported (${classes.map((shape) => shape.name).join(', ')}); tsc --strict ${tsc.status === 0 ? 'clean' : 'failed'}; tests passed ${report.testResults.length - failed.length} of ${report.testResults.length}`,
    );
    return ok && failed.length === 0 && report.testResults.length === classes.length;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const apps = process.argv.slice(2);
  if (apps.length === 0) {
    console.error('usage: port-live.ts RUNTIME_DIR [RUNTIME_DIR…]');
    process.exit(2);
  }
  let ok = true;
  for (const app of apps) ok = (await portAll(app)) && ok;
  process.exit(ok ? 0 : 1);
}

await main();
