import type { Variable } from './variable.ts';

/** Browser origins, comma-separated (`https://dash.example.com`), or `*` for any. */
export function origins(declared: {
  readonly name: string;
  readonly doc: string;
  readonly shown: string;
}): Variable<readonly string[]> {
  return {
    ...declared,
    default: Object.freeze([]),
    parse(raw, refuse) {
      const found = raw
        .split(',')
        .map((origin) => origin.trim())
        .filter((origin) => origin !== '');
      for (const origin of found) {
        if (origin !== '*' && !isOrigin(origin)) {
          refuse(
            `${declared.name} entries must be origins like https://dash.example.com (no path), or * (got "${origin}")`,
          );
        }
      }
      return Object.freeze(found);
    },
  };
}

/** The W3C Baggage-like `k=v,k2=v2` lists of the OTEL_* variables, values percent-decoded. */
export function pairs(declared: {
  readonly name: string;
  readonly doc: string;
  readonly replaces?: Variable<unknown>;
}): Variable<Readonly<Record<string, string>>> {
  const { name } = declared;
  return {
    ...declared,
    shown: 'unset',
    default: Object.freeze({}),
    parse(raw, refuse) {
      const found: Record<string, string> = {};
      for (const part of raw.split(',')) {
        if (part.trim() === '') continue;
        const at = part.indexOf('=');
        const key = at > 0 ? part.slice(0, at).trim() : '';
        if (key === '') {
          refuse(`${name} must be key=value pairs separated by commas`);
          continue;
        }
        try {
          found[key] = decodeURIComponent(part.slice(at + 1).trim());
        } catch {
          refuse(`${name} has a value that is not valid percent-encoding (key "${key}")`);
        }
      }
      return Object.freeze(found);
    },
  };
}

function isOrigin(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === text;
  } catch {
    return false;
  }
}
