// yaml.js - a JSON value as YAML text (for showing a manifest; the console
// never parses YAML).

const PLAIN = /^[A-Za-z_./][-A-Za-z0-9_./ ]*$/;
const RESERVED = /^(true|false|yes|no|on|off|null|~|y|n)$/i;

function scalar(v) {
  if (v === null) return 'null';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  const s = String(v);
  if (s === '' || !PLAIN.test(s) || RESERVED.test(s) || s.endsWith(' ') || /^[-.]?\d/.test(s) || s.includes(': ') || s.includes(' #'))
    return JSON.stringify(s);
  return s;
}

const isEmpty = (v) => (Array.isArray(v) ? v.length === 0 : Object.keys(v).length === 0);

function block(v, indent, out) {
  const pad = ' '.repeat(indent);
  if (Array.isArray(v)) {
    for (const item of v) {
      if (item !== null && typeof item === 'object' && !isEmpty(item)) {
        const sub = [];
        block(item, indent + 2, sub);
        sub[0] = `${pad}- ${sub[0].slice(indent + 2)}`;
        out.push(...sub);
      } else {
        out.push(`${pad}- ${item !== null && typeof item === 'object' ? (Array.isArray(item) ? '[]' : '{}') : scalar(item)}`);
      }
    }
    return;
  }
  for (const [k, val] of Object.entries(v)) {
    const key = scalar(k);
    if (val !== null && typeof val === 'object' && !isEmpty(val)) {
      out.push(`${pad}${key}:`);
      block(val, Array.isArray(val) ? indent : indent + 2, out);
    } else if (typeof val === 'string' && val.includes('\n')) {
      out.push(`${pad}${key}: |-`);
      for (const line of val.split('\n')) out.push(line ? `${pad}  ${line}` : '');
    } else {
      out.push(`${pad}${key}: ${val !== null && typeof val === 'object' ? (Array.isArray(val) ? '[]' : '{}') : scalar(val)}`);
    }
  }
}

export function toYaml(value) {
  const out = [];
  block(value, 0, out);
  return `${out.join('\n')}\n`;
}
