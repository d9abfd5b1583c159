/**
 * The control-plane commands a plugin may tell, as the host's vocabulary words them. The host
 * refuses any other shape, so a plugin builds its commands here rather than by hand.
 *
 * @module
 */

/** The ref built when the operator names none. */
export const DEFAULT_REF = 'main';

/** The build's own wait, passed to the control plane; the only one a plan may give. */
export const BUILD_WAIT = '1200s';

/**
 * How long a plugin lets the build command take: longer than the build's own wait, so the
 * control plane reports its own timeout rather than being cut off mid-answer.
 */
export const BUILD_TIMEOUT_SECONDS = 1500;

/**
 * Where a module's manifest is carried in the control plane.
 *
 * @param {string} module
 */
export function manifestRemote(module) {
  return `/${module}-module.json`;
}

/**
 * Where a secret is carried before the module accepts it.
 *
 * @param {string} secret
 */
export function acceptingRemote(secret) {
  return `/accepting-${secret}`;
}

/**
 * The commands of the provider sequence, each as the words it is told with: one function per
 * command, so a plan and the calls that carry it out cannot spell one differently.
 */
export const Command = Object.freeze({
  /** `module add /<module>-module.json`: registers the manifest carried there. */
  moduleAdd: (remote) => ['module', 'add', remote],
  /** `build <repository> --path modules/<module> --ref <ref> --wait 1200s`. */
  build: (repository, module, reference) =>
    ['build', repository, '--path', `modules/${module}`, '--ref', reference, '--wait', BUILD_WAIT],
  /** `module issue <module> --node <node>`: a bus account; refused for a module with none. */
  moduleIssue: (module, node) => ['module', 'issue', module, '--node', node],
  /** `assign <node> <module>`. */
  assign: (node, module) => ['assign', node, module],
  /** `prepare <node> <module>`. */
  prepare: (node, module) => ['prepare', node, module],
  /** `secret accept <node> <module> <secret> --from /accepting-<secret>`. */
  secretAccept: (node, module, secret, from = acceptingRemote(secret)) =>
    ['secret', 'accept', node, module, secret, '--from', from],
  /** `push <node>`. */
  push: (node) => ['push', node],
});

/**
 * Checks a name a command carries the way the host does: not empty, no leading `-` (it could
 * be read as an option), no `..`, no whitespace or control characters. Returns why not, in
 * the host's words, or `undefined` when it is a word.
 *
 * @param {string} what e.g. `node`
 * @param {string} value
 * @returns {string | undefined}
 */
export function checkWord(what, value) {
  const bad = (why) => `its ${what} \`${visible(value)}\` ${why}`;
  if (value.length === 0) return bad('is empty');
  if (value.startsWith('-')) return bad('starts with `-`, so it could be read as an option');
  if (value.includes('..')) return bad('contains `..`');
  if (WHITESPACE_OR_CONTROL.test(value)) return bad('contains whitespace or a control character');
  return undefined;
}

// Spelled out rather than as `\p{…}`: the engine plugins run on has no Unicode property
// tables. Control is the `Cc` category; whitespace is Unicode's White_Space, as the host reads it.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const WHITESPACE_OR_CONTROL =
  /[\u0000-\u0020\u007f-\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;

function visible(text) {
  return Array.from(text, (c) => (CONTROL.test(c) ? escapeDefault(c) : c)).join('');
}

function escapeDefault(c) {
  switch (c) {
    case '\t': return '\\t';
    case '\r': return '\\r';
    case '\n': return '\\n';
    default: return `\\u{${c.codePointAt(0).toString(16)}}`;
  }
}
