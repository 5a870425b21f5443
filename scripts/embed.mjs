// Writes the files the code once read from disk at run time into modules of their own, so that a
// bundle of a service (esbuild, webpack) carries them: the Lua steps (src/redis/lua/*.lua, src/horizon/lua/*.lua), the
// JSON Schemas (schemas/*.json) and the package's version. The build runs it first; the written
// modules are committed, so that `tsc --noEmit` works on a fresh clone. `--check` only says
// whether they are current (exit 1 when not).
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const HEADER = '// Written by scripts/embed.mjs from the files named below: do not edit; edit those and build.\n';

/** A map of file name to text, as a TypeScript module exporting it under `name`. */
function moduleOf(name, what, dir, ext) {
  const files = readdirSync(join(root, dir))
    .filter((file) => file.endsWith(ext))
    .sort();
  const entries = files.map((file) => `  ${JSON.stringify(file)}: ${JSON.stringify(readFileSync(join(root, dir, file), 'utf8'))},`);
  return `${HEADER}// ${what}: ${dir}/*${ext}\nexport const ${name}: Readonly<Record<string, string>> = {\n${entries.join('\n')}\n};\n`;
}

export function embedded() {
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  return {
    'src/redis/lua.generated.ts': moduleOf('LUA_FILES', 'The Lua steps', 'src/redis/lua', '.lua'),
    'src/horizon/lua.generated.ts': moduleOf('HORIZON_LUA_FILES', "Horizon's records, one Lua step per event", 'src/horizon/lua', '.lua'),
    'src/internal/schemas.generated.ts': moduleOf('SCHEMA_FILES', 'The JSON Schemas, as text (parsed when first used)', 'schemas', '.json'),
    'src/internal/version.generated.ts': `${HEADER}// The version in package.json.\nexport const VERSION = ${JSON.stringify(version)};\n`,
  };
}

/** Writes the modules that are not current; with `--check`, exits 1 naming them instead. */
export function embed() {
  const stale = [];
  for (const [path, text] of Object.entries(embedded())) {
    let current;
    try {
      current = readFileSync(join(root, path), 'utf8');
    } catch {
      current = undefined;
    }
    if (current === text) continue;
    if (process.argv.includes('--check')) stale.push(path);
    else writeFileSync(join(root, path), text);
  }
  if (stale.length) {
    process.stderr.write(`not current (run node scripts/embed.mjs): ${stale.join(', ')}\n`);
    process.exit(1);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) embed();
