import { canonicalTimezone } from './period.ts';

/**
 * Zones ICU (and so Intl) still calls by a name IANA has since replaced: ICU keeps the names
 * CLDR chose long ago stable, while IANA renamed the zones (`Asia/Calcutta` became
 * `Asia/Kolkata`, `Europe/Kiev` `Europe/Kyiv`). Keyed by ICU's name, as Intl resolves it.
 */
const IANA_NAMES: Readonly<Record<string, string>> = {
  'Africa/Asmera': 'Africa/Asmara',
  'America/Buenos_Aires': 'America/Argentina/Buenos_Aires',
  'America/Catamarca': 'America/Argentina/Catamarca',
  'America/Cordoba': 'America/Argentina/Cordoba',
  'America/Godthab': 'America/Nuuk',
  'America/Indianapolis': 'America/Indiana/Indianapolis',
  'America/Jujuy': 'America/Argentina/Jujuy',
  'America/Louisville': 'America/Kentucky/Louisville',
  'America/Mendoza': 'America/Argentina/Mendoza',
  'Asia/Calcutta': 'Asia/Kolkata',
  'Asia/Katmandu': 'Asia/Kathmandu',
  'Asia/Rangoon': 'Asia/Yangon',
  'Asia/Saigon': 'Asia/Ho_Chi_Minh',
  'Atlantic/Faeroe': 'Atlantic/Faroe',
  'Europe/Kiev': 'Europe/Kyiv',
  'Pacific/Enderbury': 'Pacific/Kanton',
  'Pacific/Ponape': 'Pacific/Pohnpei',
  'Pacific/Truk': 'Pacific/Chuuk',
};

/**
 * The IANA name of a zone Intl resolves, `Asia/Kolkata` for `Asia/Calcutta` or `Asia/Kolkata`:
 * what an answer states. The engine may know the zone only by the older name (see parseQuery).
 */
export function ianaTimezone(name: string): string {
  const intlName = canonicalTimezone(name) ?? name;
  return IANA_NAMES[intlName] ?? intlName;
}

/**
 * The zone name `name` stands for in a query: the IANA name when the engine loads it, else the
 * name Intl resolves it to when the engine loads that; null when Intl or the engine lacks it.
 * `zones` unset: whatever Intl knows.
 */
export function engineZone(name: string, zones: ReadonlySet<string> | undefined): string | null {
  const intlZone = canonicalTimezone(name);
  if (intlZone === null) return null;
  const loads = (zone: string) => zones === undefined || zones.has(zone);
  const iana = ianaTimezone(intlZone);
  if (loads(iana)) return iana;
  return loads(intlZone) ? intlZone : null;
}

/**
 * Every zone name a caller may send and `accepts` takes, spelled as the engine and Intl list
 * them (names are matched without regard to case: see zonePattern).
 */
export function acceptedZoneNames(
  zones: ReadonlySet<string> | undefined,
  accepts: (name: string) => boolean,
): string[] {
  const candidates = new Set([
    'UTC',
    ...(zones ?? []),
    ...Intl.supportedValuesOf('timeZone'),
    ...Object.keys(IANA_NAMES),
    ...Object.values(IANA_NAMES),
  ]);
  return [...candidates].filter(accepts).sort();
}

/**
 * `names` in any letter case, as one anchored pattern: their alternation, each letter matching
 * both cases. The published form of "a zone this service can load", so that a value valid per
 * the document is one the service takes. Flat rather than a trie: tools that draw values from a
 * pattern recurse into its groups, and a trie of zone names nests them deep.
 */
export function zonePattern(names: readonly string[]): string {
  const spell = (char: string) =>
    char.toUpperCase() !== char ? `[${char}${char.toUpperCase()}]` : char.replace(/[+]/g, '\\+');
  const lower = [...new Set(names.map((name) => name.toLowerCase()))].sort();
  return `^(${lower.map((name) => [...name].map(spell).join('')).join('|')})$`;
}
