/**
 * Our Str::slug against PHP's own (Debian's Laravel 8.83), on app names as people write them:
 * the Redis and cache prefixes Laravel derives from APP_NAME depend on it letter for letter.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { slug } from '../../src/connect/slug.js';
import { runPhpScript } from '../helpers/php.js';

const laravelSlug = (names: string[], separator = '_'): string[] =>
  JSON.parse(runPhpScript('str-slug.php', JSON.stringify(names), [separator]));

const NAMES = [
  'Laravel',
  'My App',
  'my-app',
  'my_app',
  'App_',
  '_App-',
  'Foo@Bar',
  'a@b@c',
  'x @ y',
  'Acme, Inc.',
  "Bob's Shop!",
  'v2.0 (beta)',
  'tabs\tand\nlines',
  '  spaced  out  ',
  'a - b _ c',
  '---',
  '@',
  '',
  '100% Real',
  'C++ & C#',
  'dash–en—em',
  'no\u00a0break',
  'Café Déjà Vu',
  'Ça va?',
  'Crème brûlée',
  'Ñandú',
  'İstanbul',
  'Åre Øst',
  'ÆØÅ app',
  'Straße',
  'GROẞ',
  'Œuvre',
  'Łódź',
  'Đorđe',
  'Þór',
  'Fjörður',
  'Zoë',
  'e\u0301 decomposed',
  'Smørrebrød',
  'Ĳssel',
  'ﬁne ﬂow',
  'Prices € £',
  'x² y³',
  'Моё',
  'Москва',
  'Привет, мир',
  'Щука Ёж',
  'Київ',
  'Ђорђе Љубљана',
  'Ελληνικά',
  'Αθήνα',
  'ΒΓΗΥΧ βγηυχ',
  'Ψυχή ώρα',
  '日本 app',
  '½ ™ ©',
];

describe('slug', () => {
  it("gives what Laravel's Str::slug($name, '_') gives for app names", () => {
    expect(NAMES.map((name) => slug(name))).toEqual(laravelSlug(NAMES));
  });

  it("with '-' as the separator too, '_' then being the dash it folds", () => {
    expect(NAMES.map((name) => slug(name, '-'))).toEqual(laravelSlug(NAMES, '-'));
  });

  it('agrees with PHP on any printable ASCII name', () => {
    const names = fc.sample(
      fc.string({ unit: fc.constantFrom(...' \t-_@.!aZ09'.split(''), ...'abcXYZ-_ @'.split('')), maxLength: 12 }),
      300,
    );
    expect(names.map((name) => slug(name))).toEqual(laravelSlug(names));
  });
});
