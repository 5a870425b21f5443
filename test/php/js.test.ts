/**
 * toJS and fromJS: the plain-JavaScript side of the contract, checked against values real PHP
 * wrote and read.
 */
import { describe, expect, it } from 'vitest';
import { PHP_SERIALIZED, fromJS, phpClassOf, serialize, toJS, unserialize, PhpFloat, type FromJSHint } from '../../src/php/index.js';
import { php } from '../helpers/php.js';

const read = (code: string) => toJS(unserialize(php(code))) as any;

describe('toJS', () => {
  it('gives ints as numbers within 2^53 and bigints beyond, floats as numbers with their specials', () => {
    const js = read('echo serialize([9007199254740991, 9007199254740992, PHP_INT_MIN, 1.5, -0.0, INF, -INF, NAN, 1e25]);');
    expect(js.slice(0, 3)).toEqual([9007199254740991, 9007199254740992n, -9223372036854775808n]);
    expect(js[3]).toBe(1.5);
    expect(Object.is(js[4], -0)).toBe(true);
    expect(js.slice(5, 7)).toEqual([Infinity, -Infinity]);
    expect(Number.isNaN(js[7])).toBe(true);
    expect(js[8]).toBe(1e25);
  });

  it('gives strings, and bytes that are not UTF-8 as a Uint8Array', () => {
    const js = read('echo serialize(["héllo ✓", "\\xff\\x00\\x80"]);');
    expect(js[0]).toBe('héllo ✓');
    expect(js[1]).toEqual(new Uint8Array([0xff, 0, 0x80]));
  });

  it('keeps every key whose bytes are not UTF-8 apart, in a spelling fromJS turns back into the bytes', () => {
    const input = php(
      '$o = new stdClass; $o->{"\\xfe"} = 3; echo serialize(["\\xff" => 1, "\\xfe" => 2, "\\u{FFFD}" => 0, "é\\xff" => 4, "o" => $o]);',
    );
    const js = toJS(unserialize(input)) as Record<string, unknown>;
    // Each byte outside valid UTF-8 is the lone surrogate U+DC00 + byte; valid UTF-8 reads as usual.
    expect(Object.keys(js)).toEqual(['\udcff', '\udcfe', '\ufffd', 'é\udcff', 'o']);
    expect(Object.values(js).slice(0, 4)).toEqual([1, 2, 0, 4]);
    expect({ ...(js.o as object) }).toEqual({ '\udcfe': 3 });
    expect(Buffer.compare(serialize(fromJS(js)), input)).toBe(0);
  });

  it('gives lists as arrays, other arrays as null-prototype objects', () => {
    const js = read('echo serialize([[1, 2], [1 => "a", 0 => "b"], ["k" => 1]]);');
    expect(Array.isArray(js[0])).toBe(true);
    expect(Array.isArray(js[1])).toBe(false);
    expect(Object.getPrototypeOf(js[1])).toBeNull();
    expect({ ...js[2] }).toEqual({ k: 1 });
  });

  it('gives objects their plain property names, the class through phpClassOf', () => {
    const js = read(`
      class Base { private $secret = 'base'; protected $shared = 'p'; }
      class Child extends Base { private $secret = 'child'; public $name = 'n'; }
      echo serialize(new Child);`);
    expect(phpClassOf(js)).toBe('Child');
    expect({ ...js }).toEqual({ secret: 'child', name: 'n', shared: 'p' });
    expect(Object.keys(js)).not.toContain(String(Symbol.for('laravel-queue-bridge.phpClass')));
  });

  it('resolves r: to the same object and R: to the value it names', () => {
    const js = read('$o = new stdClass; $o->self = $o; $a = [$o, $o, 5]; $a[3] = &$a[2]; echo serialize($a);');
    expect(js[0]).toBe(js[1]);
    expect(js[0].self).toBe(js[0]);
    expect(js[3]).toBe(5);
  });

  it('resolves R: after a Serializable payload that itself points back, numbered as PHP numbers them', () => {
    // The payload's r: names a slot outside the payload, at a number larger than the payload is
    // long; the R: at the end names a slot after the payload. PHP says what each should be.
    const cases = JSON.parse(
      php(`error_reporting(0);
        class Wrap implements Serializable {
          public $x;
          function __construct($x = null) { $this->x = $x; }
          function serialize() { return serialize($this->x); }
          function unserialize($s) { $this->x = unserialize($s); }
        }
        $out = [];
        foreach (range(1, 14) as $pad) {
          $o = new stdClass;
          $a = array_merge(range(1, $pad), [$o, new Wrap($o), 'x', 'y']);
          $named = count($a) - 2;
          $a[] = &$a[$named];
          $u = unserialize(serialize($a));
          $out[] = [base64_encode(serialize($a)), count($a) - 1, $u[count($a) - 1]];
        }
        echo json_encode($out);`).toString(),
    ) as [string, number, string][];
    for (const [base64, at, phpValue] of cases) {
      const bytes = Buffer.from(base64, 'base64');
      const value = unserialize(bytes);
      expect((toJS(value) as unknown[])[at]).toBe(phpValue);
      expect(Buffer.compare(serialize(value), bytes)).toBe(0);
    }
  });

  it('gives an object of a class kept out as PHP shows it: its class name in __PHP_Incomplete_Class_Name; fromJS writes it back as PHP does', () => {
    const input = php('class Shipment { public $id = 7; protected $note = "x"; private $p = 1; } echo serialize(new Shipment);');
    const phpView = JSON.parse(
      php(`echo json_encode((array) unserialize(base64_decode('${input.toString('base64')}'), ['allowed_classes' => false]));`).toString(),
    );
    const js = toJS(unserialize(input, { allowedClasses: false })) as Record<string, unknown>;
    expect(phpClassOf(js)).toBe('__PHP_Incomplete_Class');
    expect({ ...js }).toEqual({
      __PHP_Incomplete_Class_Name: phpView.__PHP_Incomplete_Class_Name,
      id: phpView.id,
      note: phpView['\0*\0note'],
      p: phpView['\0Shipment\0p'],
    });
    const phpAgain = php(`echo serialize(unserialize(base64_decode('${input.toString('base64')}'), ['allowed_classes' => false]));`);
    expect(serialize(fromJS(js, { visibility: { note: 'protected', p: 'private' } })).toString('latin1')).toBe(phpAgain.toString('latin1'));
  });

  it('gives enums as { name } with their class, Serializable objects with their raw payload', () => {
    const js = read(`
      enum Status: string { case Active = 'a'; }
      class Legacy implements Serializable { function serialize() { return 'raw'; } function unserialize($d) {} }
      echo @serialize([Status::Active, new Legacy]);`);
    expect(phpClassOf(js[0])).toBe('Status');
    expect(js[0].name).toBe('Active');
    expect(phpClassOf(js[1])).toBe('Legacy');
    expect(Buffer.from(js[1][PHP_SERIALIZED]).toString()).toBe('raw');
  });
});

describe('fromJS', () => {
  it('makes whole numbers ints within 64 bits, past 2^53 too, as json_decode reads them; floats beyond', () => {
    const numbers = ['1152921504606846976', '-9223372036854775808', '9007199254740992', '100000000000000000000', '0.5'];
    const phpBytes = php(`echo serialize(json_decode('[${numbers.join(',')}]'));`).toString('latin1');
    const js = numbers.map(Number);
    expect(Buffer.from(serialize(fromJS(js))).toString('latin1')).toBe(phpBytes);
    // Plain JavaScript given to serialize is converted the same way.
    expect(Buffer.from(serialize(js)).toString('latin1')).toBe(Buffer.from(serialize(fromJS(js))).toString('latin1'));
    expect(toJS(fromJS(2 ** 60, 'int'))).toBe(2n ** 60n);
    expect(() => fromJS(1e20, 'int')).toThrow(/is not an int/);
  });

  const hint: FromJSHint = {
    class: 'Invoice',
    visibility: { total: 'protected', token: 'private' },
    props: { total: 'float', lines: { items: { props: { qty: 'int' } } } },
  };
  const js = { id: 7, total: 10, token: 'sekret', lines: [{ sku: 'A-1', qty: 2 }], meta: { '1': 'one', x: null } };
  const declare = `class Invoice { public int $id; protected float $total; private string $token; public array $lines; public array $meta; }`;

  it('builds what PHP builds: the same object serialized by PHP has the same bytes', () => {
    const phpBytes = php(`${declare}
      $i = (new ReflectionClass('Invoice'))->newInstanceWithoutConstructor();
      $set = fn ($p, $v) => (new ReflectionProperty('Invoice', $p))->setValue($i, $v);
      $set('id', 7); $set('total', 10.0); $set('token', 'sekret'); $set('lines', [['sku' => 'A-1', 'qty' => 2]]); $set('meta', ['1' => 'one', 'x' => null]);
      echo serialize($i);`);
    expect(Buffer.from(serialize(fromJS(js, hint))).toString('latin1')).toBe(phpBytes.toString('latin1'));
  });

  it('writes what PHP 8.2 reads into typed properties (a float where a float is declared)', () => {
    const bytes = Buffer.from(serialize(fromJS(js, hint))).toString('base64');
    const out = php(`${declare} $i = unserialize(base64_decode('${bytes}')); var_dump((fn () => $this->total)->call($i));`).toString();
    expect(out.trim()).toBe('float(10)');
  });

  it('turns integers into ints (past 2^53 too), other numbers into floats, and takes PhpValues as they are', () => {
    expect(Buffer.from(serialize(fromJS([1, 1.5, -0, 2 ** 60, 5n, new PhpFloat(3)]))).toString()).toBe(
      php('echo serialize([1, 1.5, -0.0, 2**60, 5, 3.0]);').toString(),
    );
  });

  it('makes -0 the int 0 when an int is asked for, as PHP casts it, and the float -0 otherwise', () => {
    expect(Buffer.from(serialize(fromJS([-0, -0, 0], { items: 'int' }))).toString()).toBe(
      php('echo serialize([(int) -0.0, (int) -0.0, 0]);').toString(),
    );
    expect(Buffer.from(serialize(fromJS({ n: -0, f: -0 }, { props: { n: 'int' } }))).toString()).toBe(
      php('echo serialize(["n" => (int) -0.0, "f" => -0.0]);').toString(),
    );
  });

  it('gives back the bytes of a PHP object through toJS when the hints restore what toJS forgets', () => {
    const bytes = php(`${declare}
      $i = (new ReflectionClass('Invoice'))->newInstanceWithoutConstructor();
      foreach (['id' => 7, 'total' => 10.0, 'token' => 'sekret', 'lines' => [['sku' => 'A-1', 'qty' => 2]], 'meta' => ['1' => 'one', 'x' => null]] as $p => $v) (new ReflectionProperty('Invoice', $p))->setValue($i, $v);
      echo serialize($i);`);
    expect(Buffer.from(serialize(fromJS(toJS(unserialize(bytes)), hint))).equals(bytes)).toBe(true);
  });

  it('refuses what PHP cannot hold, saying where', () => {
    expect(() => fromJS({ a: [1.5] }, { props: { a: { items: 'int' } } })).toThrow(/1.5 is not an int at \$\.a\[0\]/);
    const cyclic: unknown[] = [];
    cyclic.push(cyclic);
    expect(() => fromJS(cyclic)).toThrow(/cycle through arrays/);
    expect(() => serialize(fromJS(1n << 64n))).toThrow(/64-bit range/);
  });

  it('refuses a built-in whose value is not in its properties, rather than writing it as an empty array', () => {
    expect(() => fromJS({ at: new Date(0) })).toThrow(
      /a JavaScript Date has no PHP value of its own \(for a Carbon, build it with buildDate.*\) at \$\.at/,
    );
    expect(() => fromJS([new Set([1])])).toThrow(/a JavaScript Set has no PHP value of its own \(give its values as an array\) at \$\[0\]/);
    expect(() => fromJS({ r: /x/ })).toThrow(/a JavaScript RegExp .* at \$\.r/);
    // A Map and a typed array keep their entries in view, and are written with them.
    expect(Buffer.from(serialize(fromJS(new Map([[1, 'a']])))).toString()).toBe('a:1:{i:1;s:1:"a";}');
  });
});
