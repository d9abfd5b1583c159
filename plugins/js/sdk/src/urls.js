/**
 * Whether a URL is inside a fetch grant: the rule the host decides a fetch by, here so a
 * plugin can check its own URLs against its manifest before it asks.
 *
 * An exact grant matches its URL byte for byte. A prefix grant (`http://host/api/*`) matches
 * a URL that starts with the prefix and whose path is plain: only ASCII letters, digits and
 * `-._~/`, no `.` or `..` segment, no empty segment, no percent-encoding, no user information
 * before the host. Anything else may be resolved by a server, proxy or client library to a
 * path outside the prefix the grant was reviewed as.
 *
 * @module
 */

/**
 * Whether `url` is inside `grant` (an exact URL, or a prefix ending in `*`).
 *
 * @param {string} grant
 * @param {string} url
 * @returns {boolean}
 */
export function withinGrant(grant, url) {
  if (!grant.endsWith('*')) return grant === url;
  const prefix = grant.slice(0, -1);
  return url.startsWith(prefix) && isNormal(url) && sameAuthority(prefix, url);
}

/** `[scheme, authority, rest]` of a `scheme://…` URL, or undefined. */
function split(url) {
  const at = url.indexOf('://');
  if (at < 0) return undefined;
  const rest = url.slice(at + 3);
  const end = rest.search(/[/?#]/);
  const cut = end < 0 ? rest.length : end;
  return [url.slice(0, at), rest.slice(0, cut), rest.slice(cut)];
}

function isNormal(url) {
  const parts = split(url);
  if (parts === undefined) return false;
  const [, authority, rest] = parts;
  if (authority.includes('@') || url.includes('\\') || /[\u0000-\u0020\u007f-\u009f]/.test(url)) return false;
  if (url.includes('#')) return false;
  const q = rest.indexOf('?');
  const path = q < 0 ? rest : rest.slice(0, q);
  const query = q < 0 ? '' : rest.slice(q + 1);
  const plainPath = /^[A-Za-z0-9\-._~/]*$/.test(path);
  const plainQuery = /^[A-Za-z0-9\-._~=&/,:]*$/.test(query);
  const segments = path.split('/').slice(1);
  const last = Math.max(0, segments.length - 1);
  return (
    plainPath &&
    plainQuery &&
    !segments.some((s, i) => s === '.' || s === '..' || (s === '' && i !== last))
  );
}

function sameAuthority(prefix, url) {
  const p = split(prefix);
  const u = split(url);
  if (p === undefined || u === undefined) return false;
  return p[2] !== '' || p[1] === u[1];
}
