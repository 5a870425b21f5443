/**
 * `lqb shapes` as a user runs it (the built CLI) on php-fixture-gen/shapes-app, read by Debian's
 * real PHP 8.2 and Laravel 8.83. Property order, the `serialized` flags and defaults are checked
 * against what PHP's own serialize() writes for instances of the same classes.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseShapes, readShapes, type ClassShape, type PropertyShape, type ShapesFile } from '../../src/shapes/index.js';
import { php, root } from '../helpers/php.js';

const APP = join(root, 'php-fixture-gen/shapes-app');
const dir = mkdtempSync(join(tmpdir(), 'lqb-shapes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function lqb(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const result = spawnSync(process.execPath, [join(root, 'dist/cli/main.js'), ...args], {
    cwd: dir,
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Runs `lqb shapes` and reads what it wrote; fails naming its stderr when it did not succeed. */
function shapesOf(args: string[], out: string): ShapesFile {
  const { status, stderr } = lqb(['shapes', ...args, `--out=${out}`]);
  expect(stderr, 'lqb shapes said something on stderr').toBe('');
  expect(status).toBe(0);
  return readShapes(join(dir, out));
}

/** The key serialize() writes for a property of a class serialized by `serializer`. */
function mangled(p: PropertyShape, shape: ClassShape): string {
  if (p.visibility === 'protected') return `\0*\0${p.name}`;
  // SerializesModels' __serialize mangles a private one with get_class($this).
  if (p.visibility === 'private') return `\0${shape.serializer === 'SerializesModels' ? shape.name : p.class}\0${p.name}`;
  return p.name;
}

/**
 * What PHP writes: for each class, an instance made without its constructor, every uninitialized
 * typed property given a value of its type (so every property is written), serialize()d; the
 * keys in the order PHP wrote them, and each property's value on a fresh instance.
 */
function phpSerialized(classes: string[]): Record<string, { keys: string[]; fresh: Record<string, string> }> {
  const code = `
    require ${JSON.stringify(join(APP, 'vendor/autoload.php'))};
    function sample(?ReflectionType $type) {
      $name = $type instanceof ReflectionNamedType ? $type->getName() : (string) $type;
      $name = ltrim($name, '?');
      return match (true) {
        $name === 'int' => 7, $name === 'float' => 1.25, $name === 'string' => 's', $name === 'bool' => true,
        $name === 'array' => [], is_a($name, Illuminate\\Database\\Eloquent\\Collection::class, true) => new $name(),
        class_exists($name) => (new ReflectionClass($name))->newInstanceWithoutConstructor(),
        default => null,
      };
    }
    $out = [];
    foreach (json_decode($argv[1]) as $class) {
      $ref = new ReflectionClass($class);
      $fresh = $ref->newInstanceWithoutConstructor();
      $values = [];
      for ($c = $ref; $c; $c = $c->getParentClass()) {
        foreach ($c->getProperties() as $p) {
          if ($p->isStatic() || !$p->isInitialized($fresh)) continue;
          $p->setAccessible(true);
          $values[$p->getDeclaringClass()->getName() . '::' . $p->getName()] ??= serialize($p->getValue($fresh));
        }
      }
      $object = $ref->newInstanceWithoutConstructor();
      foreach ($ref->getProperties() as $p) {
        if (!$p->isStatic() && !$p->isInitialized($object)) { $p->setAccessible(true); $p->setValue($object, sample($p->getType())); }
      }
      // The keys of the outermost object, read back by PHP itself from its own output.
      $keys = array_keys((array) unserialize(serialize($object), ['allowed_classes' => false]));
      $keys = array_values(array_filter($keys, fn ($k) => $k !== '__PHP_Incomplete_Class_Name'));
      $out[$class] = ['keys' => $keys, 'fresh' => $values];
    }
    echo json_encode($out);
  `;
  return JSON.parse(php(code.replace('$argv[1]', `'${JSON.stringify(classes).replace(/\\/g, '\\\\')}'`)).toString('utf8'));
}

describe('lqb shapes --app on the sample app', () => {
  let shapes: ShapesFile;
  beforeAll(() => {
    shapes = shapesOf([`--app=${APP}`], 'lqb-shapes.json');
  });

  it('names the Laravel version PHP runs', () => {
    expect(shapes.version).toBe(1);
    expect(shapes.laravel).toBe(php('require "Illuminate/autoload.php"; echo Illuminate\\Foundation\\Application::VERSION;').toString());
    expect(shapes.laravel).toBe('8.83.26');
    expect(shapes.php).toBe(php('echo PHP_VERSION;').toString());
  });

  it('finds every queueable class of app/ and what they reference, each of its kind', () => {
    const kinds = Object.fromEntries(Object.values(shapes.classes).map((c) => [c.name, c.kind]));
    expect(kinds).toEqual({
      'App\\Events\\OrderShipped': 'event',
      'App\\Jobs\\ChargeCard': 'job',
      'App\\Jobs\\ImportFeed': 'job',
      'App\\Jobs\\MonthlyReport': 'job',
      'App\\Jobs\\PlainReport': 'job',
      'App\\Jobs\\ReportOptions': 'class',
      'App\\Jobs\\RetryLater': 'job',
      'App\\Jobs\\ShipOrder': 'job',
      'App\\Jobs\\SyncUser': 'job',
      'App\\Listeners\\SendShipmentNotification': 'listener',
      'App\\Mail\\OrderShippedMail': 'mailable',
      'App\\Models\\User': 'model',
      'App\\Notifications\\InvoicePaid': 'notification',
    });
  });

  it('lists properties in the order PHP serialize() writes them, with the serialized flags PHP bears out', () => {
    const checked = Object.values(shapes.classes).filter((c) => c.kind !== 'model');
    const written = phpSerialized(checked.map((c) => c.name));
    for (const shape of checked) {
      const ours = shape.properties.filter((p) => p.serialized).map((p) => mangled(p, shape));
      expect(ours, `${shape.name}: the serialized properties, in order`).toEqual(written[shape.name]!.keys);
      for (const p of shape.properties.filter((p) => !p.serialized)) {
        expect(written[shape.name]!.keys, `${shape.name}::$${p.name} is marked not serialized`).not.toContain(mangled(p, shape));
      }
    }
    // The cases that matter: a parent's private property is never written under SerializesModels, and is natively.
    const tenant = (name: string) => shapes.classes[name]!.properties.find((p) => p.name === 'tenant')!;
    expect(tenant('App\\Jobs\\MonthlyReport')).toMatchObject({ visibility: 'private', class: 'App\\Jobs\\BaseReport', serialized: false });
    expect(tenant('App\\Jobs\\PlainReport')).toMatchObject({ visibility: 'private', class: 'App\\Jobs\\BaseReport', serialized: true });
    expect(written['App\\Jobs\\PlainReport']!.keys[0]).toBe('\0App\\Jobs\\BaseReport\0tenant');
  });

  it('gives each default as PHP serialize() writes the value a fresh instance holds', () => {
    const checked = Object.values(shapes.classes).filter((c) => c.kind !== 'model');
    const written = phpSerialized(checked.map((c) => c.name));
    let defaults = 0;
    for (const shape of checked) {
      for (const p of shape.properties) {
        const fresh = written[shape.name]!.fresh[`${p.class}::${p.name}`];
        if (p.default === undefined) {
          // Typed with no default (or promoted): uninitialized on a fresh instance.
          expect(fresh, `${shape.name}::$${p.name} has no default, yet PHP gives it ${fresh}`).toBeUndefined();
        } else {
          defaults++;
          expect(p.default, `${shape.name}::$${p.name}'s default`).toBe(fresh);
        }
      }
    }
    expect(defaults).toBeGreaterThan(20);
  });

  it('reads visibility, declaring class, type and nullability as reflection prints them', () => {
    const props = (name: string) => Object.fromEntries(shapes.classes[name]!.properties.map((p) => [p.name, p]));
    const ship = props('App\\Jobs\\ShipOrder');
    expect(ship.orderId).toMatchObject({ visibility: 'public', class: 'App\\Jobs\\ShipOrder', type: 'int', nullable: false });
    expect(ship.orderId!.default).toBeUndefined();
    expect(ship.secret).toMatchObject({ visibility: 'protected', type: 'string', nullable: false });
    expect(ship.notes).toMatchObject({ visibility: 'private', type: '?array', nullable: true, default: 'N;' });
    expect(ship.weight).toMatchObject({ type: 'float', default: 'd:1.5;' });
    expect(ship.express).toMatchObject({ visibility: 'protected', type: 'bool', default: 'b:0;' });
    expect(ship.coupon).toMatchObject({ type: '?string', nullable: true });
    expect(ship.coupon!.default).toBeUndefined();
    expect(ship.untyped).toMatchObject({ type: null, nullable: true, default: 's:5:"plain";' });
    // Queueable's properties are the class's own as reflection sees them (traits are copied in).
    expect(ship.queue).toMatchObject({ visibility: 'public', class: 'App\\Jobs\\ShipOrder', default: 'N;' });
    const monthly = props('App\\Jobs\\MonthlyReport');
    expect(monthly.month).toMatchObject({ visibility: 'protected', type: 'int', promoted: true });
    expect(monthly.month!.default).toBeUndefined();
    expect(monthly.recipients).toMatchObject({ visibility: 'private', type: 'array', promoted: true });
    expect(monthly.version).toMatchObject({ visibility: 'protected', class: 'App\\Jobs\\BaseReport', default: 'i:1;' });
    expect(props('App\\Jobs\\PlainReport').version).toMatchObject({ class: 'App\\Jobs\\PlainReport', default: 'i:2;' });
    expect(props('App\\Jobs\\ReportOptions').paper).toMatchObject({
      visibility: 'protected',
      type: php('class A { public int|string $p; } echo (new ReflectionProperty("A", "p"))->getType();').toString(),
    });
  });

  it("marks model and collection properties, with the model's connection", () => {
    const sync = Object.fromEntries(shapes.classes['App\\Jobs\\SyncUser']!.properties.map((p) => [p.name, p]));
    expect(sync.user).toMatchObject({ type: 'App\\Models\\User', model: { class: 'App\\Models\\User', connection: 'mysql' } });
    expect(sync.friends).toMatchObject({
      type: '?Illuminate\\Database\\Eloquent\\Collection',
      nullable: true,
      collection: 'Illuminate\\Database\\Eloquent\\Collection',
    });
    expect(shapes.classes['App\\Models\\User']).toMatchObject({
      kind: 'model',
      connection: 'mysql',
      parent: 'Illuminate\\Database\\Eloquent\\Model',
    });
  });

  it('translates what it can of uniqueId(), backoff() and retryUntil(), and says why not of the rest', () => {
    const c = shapes.classes;
    // backoff(): array — the declared return type wraps the body, as PHP applies it to the result.
    expect(c['App\\Jobs\\ShipOrder']!.expressions).toEqual({
      backoff: { returns: 'array', nullable: false, strict: false, of: { array: [{ lit: 1 }, { lit: 2 }] } },
    });
    expect(c['App\\Jobs\\PlainReport']!.expressions).toEqual({
      uniqueId: { untranslated: 'it calls or names sprintf, which is not translated' },
    });
    expect(c['App\\Jobs\\RetryLater']!.expressions).toEqual({
      backoff: { untranslated: 'it uses `*` inside an array' },
      retryUntil: { untranslated: 'it uses `*` where `)` was expected' },
    });
    // A class without such methods carries no expressions.
    expect(c['App\\Jobs\\ChargeCard']!.expressions).toBeUndefined();
  });

  it('reads declared retry rules, the methods a class defines, interfaces, traits and serializer', () => {
    const c = shapes.classes;
    expect(c['App\\Jobs\\ShipOrder']!.declared).toEqual({ tries: 4, timeout: 30, backoff: [1, 2], maxExceptions: 3 });
    expect(c['App\\Jobs\\ChargeCard']!.declared).toEqual({ tries: 2 });
    expect(c['App\\Jobs\\PlainReport']!.declared).toEqual({ failOnTimeout: true, uniqueFor: 600, deleteWhenMissingModels: true });
    // Queueable's null connection and queue are not declared values.
    expect(c['App\\Jobs\\MonthlyReport']!.declared).toEqual({});
    expect(c['App\\Listeners\\SendShipmentNotification']!.declared).toEqual({ tries: 3 });
    expect(c['App\\Jobs\\ShipOrder']!.methods).toEqual(['backoff', 'failed']);
    expect(c['App\\Jobs\\PlainReport']!.methods).toEqual(['uniqueId']);
    // Laravel's own methods (Mailable's, Notification's) do not count.
    expect(c['App\\Mail\\OrderShippedMail']!.methods).toEqual([]);
    expect(c['App\\Jobs\\ChargeCard']!.interfaces).toEqual(
      expect.arrayContaining(['Illuminate\\Contracts\\Queue\\ShouldQueue', 'Illuminate\\Contracts\\Queue\\ShouldBeEncrypted']),
    );
    expect(c['App\\Jobs\\PlainReport']!.interfaces).toContain('Illuminate\\Contracts\\Queue\\ShouldBeUnique');
    expect(c['App\\Jobs\\ShipOrder']!.traits).toEqual([
      'Illuminate\\Foundation\\Bus\\Dispatchable',
      'Illuminate\\Queue\\InteractsWithQueue',
      'Illuminate\\Bus\\Queueable',
      'Illuminate\\Queue\\SerializesModels',
      'App\\Jobs\\RecordsWhatItGot',
      // A trait's own trait is listed too.
      'Illuminate\\Queue\\SerializesAndRestoresModelIdentifiers',
    ]);
    expect(c['App\\Jobs\\ShipOrder']!.serializer).toBe('SerializesModels');
    expect(c['App\\Jobs\\PlainReport']!.serializer).toBe('native');
    expect(c['App\\Jobs\\MonthlyReport']!.parent).toBe('App\\Jobs\\BaseReport');
  });

  it('records what a listener handles', () => {
    expect(shapes.classes['App\\Listeners\\SendShipmentNotification']!.handles).toEqual([
      { method: 'handle', event: 'App\\Events\\OrderShipped' },
    ]);
  });

  it('prints one line: the count of each kind and where it wrote; then one per method it could not translate', () => {
    const { status, stdout } = lqb(['shapes', `--app=${APP}`, '--out=summary.json']);
    expect(status).toBe(0);
    expect(stdout.split('\n')).toEqual([
      '7 jobs, 1 listener, 1 notification, 1 mailable, 1 event, 1 model, 1 class (Laravel 8.83.26) written to summary.json',
      'untranslated: App\\Jobs\\PlainReport::uniqueId() (it calls or names sprintf, which is not translated): give its handler, or dispatch, a uniqueId(job) function',
      'untranslated: App\\Jobs\\RetryLater::backoff() (it uses `*` inside an array): give its handler, or dispatch, a backoff(job) function',
      'untranslated: App\\Jobs\\RetryLater::retryUntil() (it uses `*` where `)` was expected): give its handler, or dispatch, a retryUntil(job) function',
      '',
    ]);
  });
});

describe('lqb shapes --class and --bootstrap', () => {
  it('--class limits the set to the classes named and what they reference', () => {
    const listener = shapesOf([`--app=${APP}`, '--class=App\\Listeners\\SendShipmentNotification'], 'one.json');
    expect(Object.keys(listener.classes)).toEqual(['App\\Events\\OrderShipped', 'App\\Listeners\\SendShipmentNotification']);
    const two = shapesOf([`--app=${APP}`, '--class=App\\Jobs\\SyncUser,App\\Jobs\\ChargeCard'], 'two.json');
    expect(Object.keys(two.classes)).toEqual(['App\\Jobs\\ChargeCard', 'App\\Jobs\\SyncUser', 'App\\Models\\User']);
  });

  it('--class naming a class the app does not have fails with one line naming it', () => {
    const { status, stderr } = lqb(['shapes', `--app=${APP}`, '--class=App\\Jobs\\Nope', '--out=nope.json']);
    expect(status).toBe(1);
    expect(stderr).toBe('lqb shapes: --class: no class App\\Jobs\\Nope in the app\n');
  });

  it('--bootstrap takes every ShouldQueue class the file declares or loads', () => {
    const file = join(dir, 'bootstrap.php');
    writeFileSync(
      file,
      `<?php
namespace Scratch;
require ${JSON.stringify(join(APP, 'vendor/autoload.php'))};
class_exists(\\App\\Jobs\\ChargeCard::class);
class Ping implements \\Illuminate\\Contracts\\Queue\\ShouldQueue { public int $n = 1; private ?string $why; }
class NotQueued { public int $n = 1; }
`,
    );
    const shapes = shapesOf([`--bootstrap=${file}`], 'boot.json');
    expect(Object.keys(shapes.classes)).toEqual(['App\\Jobs\\ChargeCard', 'Scratch\\Ping']);
    expect(shapes.laravel).toBe('8.83.26');
    expect(shapes.classes['Scratch\\Ping']!.properties).toEqual([
      { name: 'n', visibility: 'public', class: 'Scratch\\Ping', type: 'int', nullable: false, serialized: true, default: 'i:1;' },
      { name: 'why', visibility: 'private', class: 'Scratch\\Ping', type: '?string', nullable: true, serialized: true },
    ]);
  });
});

describe('lqb shapes on an app with illuminate/queue but not illuminate/notifications or illuminate/mail', () => {
  // php-fixture-gen/queue-only-app: Debian's illuminate/queue and /bus only, as a Capsule app has.
  const QUEUE_ONLY = join(root, 'php-fixture-gen/queue-only-app');
  const NOT_INSTALLED = {
    'App\\Mail\\PhotoReady': /^Class "Illuminate\\Mail\\Mailable" not found \(\S+\/app\/Mail\/PhotoReady\.php:10\)$/,
    'App\\Notifications\\PhotoResized':
      /^Class "Illuminate\\Notifications\\Notification" not found \(\S+\/app\/Notifications\/PhotoResized\.php:10\)$/,
  };

  it('writes the shapes of what it can read, and names each class it cannot (stderr, one line each, and the file)', () => {
    const { status, stdout, stderr } = lqb(['shapes', `--app=${QUEUE_ONLY}`, '--out=queue-only.json']);
    expect(status, `lqb shapes said: ${stderr}`).toBe(0);
    expect(stdout).toBe('1 job, 1 model (Laravel unknown) written to queue-only.json\n');
    const lines = stderr.trimEnd().split('\n');
    expect(lines, 'one stderr line per unreadable class').toHaveLength(2);
    expect(lines[0]).toMatch(/^lqb shapes: cannot read App\\Mail\\PhotoReady: Class "Illuminate\\Mail\\Mailable" not found \(/);
    expect(lines[1]).toMatch(
      /^lqb shapes: cannot read App\\Notifications\\PhotoResized: Class "Illuminate\\Notifications\\Notification" not found \(/,
    );
    const shapes = readShapes(join(dir, 'queue-only.json'));
    expect(Object.keys(shapes.classes)).toEqual(['App\\Jobs\\ResizeImage', 'App\\Models\\Photo']);
    expect(shapes.unreadable!.map((u) => u.class)).toEqual(Object.keys(NOT_INSTALLED));
    for (const { class: name, reason } of shapes.unreadable!)
      expect(reason, `the reason ${name} is unreadable`).toMatch(NOT_INSTALLED[name as keyof typeof NOT_INSTALLED]);
    const job = shapes.classes['App\\Jobs\\ResizeImage']!;
    expect(job.kind).toBe('job');
    expect(job.serializer).toBe('SerializesModels');
    expect(job.declared).toEqual({ tries: 3 });
    expect(job.properties.find((p) => p.name === 'photo')!.model).toEqual({ class: 'App\\Models\\Photo', connection: null });
  });

  it('--class naming an unreadable class names it and reads the others', () => {
    const { status, stderr } = lqb([
      'shapes',
      `--app=${QUEUE_ONLY}`,
      '--class=App\\Jobs\\ResizeImage,App\\Notifications\\PhotoResized',
      '--out=queue-only-class.json',
    ]);
    expect(status, `lqb shapes said: ${stderr}`).toBe(0);
    expect(stderr).toMatch(
      /^lqb shapes: cannot read App\\Notifications\\PhotoResized: Class "Illuminate\\Notifications\\Notification" not found \([^\n]+\)\n$/,
    );
    const shapes = readShapes(join(dir, 'queue-only-class.json'));
    expect(Object.keys(shapes.classes)).toEqual(['App\\Jobs\\ResizeImage', 'App\\Models\\Photo']);
    expect(shapes.unreadable!.map((u) => u.class)).toEqual(['App\\Notifications\\PhotoResized']);
  });

  it('--bootstrap, as a Capsule app is read: its jobs, without a ReflectionException for Notification', () => {
    const file = join(dir, 'capsule-bootstrap.php');
    writeFileSync(
      file,
      `<?php\nrequire ${JSON.stringify(join(QUEUE_ONLY, 'vendor/autoload.php'))};\nclass_exists(\\App\\Jobs\\ResizeImage::class);\n`,
    );
    const shapes = shapesOf([`--bootstrap=${file}`], 'capsule.json');
    expect(Object.keys(shapes.classes)).toEqual(['App\\Jobs\\ResizeImage', 'App\\Models\\Photo']);
    expect(shapes.classes['App\\Jobs\\ResizeImage']!.kind).toBe('job');
    expect(shapes.unreadable).toBeUndefined();
  });

  it("a full app's file has no unreadable list", () => {
    expect(JSON.parse(readFileSync(join(dir, 'lqb-shapes.json'), 'utf8'))).not.toHaveProperty('unreadable');
  });
});

/** A scratch app: vendor/autoload.php as the sample app's, and the given files. */
function scratchApp(name: string, files: Record<string, string>): string {
  const app = join(dir, name);
  mkdirSync(join(app, 'vendor'), { recursive: true });
  writeFileSync(join(app, 'vendor/autoload.php'), readFileSync(join(APP, 'vendor/autoload.php')));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(app, path)), { recursive: true });
    writeFileSync(join(app, path), text);
  }
  return app;
}

const job = (name: string) =>
  `<?php\nnamespace App\\Jobs;\nclass ${name} implements \\Illuminate\\Contracts\\Queue\\ShouldQueue { public int $n = 1; }\n`;

describe('lqb shapes: the Laravel version', () => {
  it('reads laravel/framework from vendor/composer/installed.json, Composer 2 and Composer 1 layouts', () => {
    const two = scratchApp('composer2', {
      'app/Jobs/A.php': job('A'),
      'vendor/composer/installed.json': JSON.stringify({ packages: [{ name: 'laravel/framework', version: 'v9.52.16' }] }),
    });
    expect(shapesOf([`--app=${two}`], 'c2.json').laravel).toBe('9.52.16');
    const one = scratchApp('composer1', {
      'app/Jobs/A.php': job('A'),
      'vendor/composer/installed.json': JSON.stringify([
        { name: 'monolog/monolog', version: '2.0.0' },
        { name: 'laravel/framework', version: 'v7.30.6' },
      ]),
    });
    expect(shapesOf([`--app=${one}`], 'c1.json').laravel).toBe('7.30.6');
  });
});

describe('lqb shapes: failures', () => {
  it('a directory that is not there: status 1, one line naming it', () => {
    const { status, stderr } = lqb(['shapes', '--app=/no/such/app']);
    expect(status).toBe(1);
    expect(stderr).toBe('lqb shapes: --app=/no/such/app: no such directory\n');
  });

  it("a syntax error in a class file: status 1, one line naming the file and PHP's message", () => {
    const app = scratchApp('parse-error', {
      'app/Jobs/A.php': job('A'),
      'app/Jobs/Broken.php':
        '<?php\nnamespace App\\Jobs;\nclass Broken implements \\Illuminate\\Contracts\\Queue\\ShouldQueue {\n  public int $n = ;\n}\n',
    });
    const { status, stderr } = lqb(['shapes', `--app=${app}`, '--out=never.json']);
    expect(status).toBe(1);
    expect(stderr.split('\n')).toHaveLength(2);
    expect(stderr).toMatch(/^lqb shapes: PHP error loading \S+\/app\/Jobs\/Broken\.php:4: ParseError: syntax error, unexpected token ";"/);
  });

  it('a fatal error PHP cannot catch (a class missing an interface method): status 1, one line naming the file', () => {
    const app = scratchApp('fatal', {
      'app/Jobs/Half.php':
        '<?php\nnamespace App\\Jobs;\nclass Half implements \\Illuminate\\Contracts\\Queue\\ShouldQueue, \\Countable {\n}\n',
    });
    const { status, stderr } = lqb(['shapes', `--app=${app}`, '--out=never.json']);
    expect(status).toBe(1);
    expect(stderr.split('\n')).toHaveLength(2);
    expect(stderr).toMatch(/^lqb shapes: PHP fatal error in \S+\/app\/Jobs\/Half\.php:3: Class App\\Jobs\\Half contains 1 abstract method/);
  });

  it('usage errors: neither or both of --app and --bootstrap, an argument: status 2', () => {
    for (const args of [[], [`--app=${APP}`, '--bootstrap=x.php'], [`--app=${APP}`, 'extra']]) {
      const { status, stderr } = lqb(['shapes', ...args]);
      expect(status, `lqb shapes ${args.join(' ')}`).toBe(2);
      expect(stderr.split('\n'), `lqb shapes ${args.join(' ')}`).toHaveLength(2);
    }
  });

  it('no php on PATH: one line saying so', () => {
    const { status, stderr } = lqb(['shapes', `--app=${APP}`], { ...process.env, PATH: '/nonexistent' });
    expect(status).toBe(1);
    expect(stderr).toBe(
      "lqb shapes: php is not on PATH: lqb shapes runs PHP to read the app's classes (install PHP 8 or put it on PATH)\n",
    );
  });
});

describe('readShapes', () => {
  it('names the file and the JSON path of what is wrong', () => {
    const good = JSON.parse(readFileSync(join(dir, 'lqb-shapes.json'), 'utf8'));
    const file = join(dir, 'bad.json');
    good.classes['App\\Jobs\\ShipOrder'].properties[1].visibility = 'friend';
    writeFileSync(file, JSON.stringify(good));
    expect(() => readShapes(file)).toThrow(
      `${file}: /classes/App\\Jobs\\ShipOrder/properties/1/visibility must be one of "public", "protected", "private"`,
    );
    delete good.classes['App\\Jobs\\ShipOrder'].properties[1].visibility;
    expect(() => parseShapes(good, 'x.json')).toThrow(
      'x.json: /classes/App\\Jobs\\ShipOrder/properties/1/visibility is required but missing',
    );
    expect(() => parseShapes('{', 'y.json')).toThrow(/^y\.json: \(root\) is not JSON/);
    expect(() => readShapes(join(dir, 'none.json'))).toThrow(/none\.json: \(root\) cannot be read/);
  });
});
