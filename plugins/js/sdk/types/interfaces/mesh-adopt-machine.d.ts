/** @module Interface mesh:adopt/machine@0.2.0 **/
/**
 * Asks the node what a container runs; none when there is no such container. Returns
 * `denied` unless the manifest's `adopt.grants.inspect` lists the name, `failed` when
 * the container engine errs or answers what the host cannot read, `timed-out` past the
 * host's bound (10 s by default on a live mesh), `unavailable` when the engine cannot be
 * reached.
 */
export function inspect(container: string): ContainerState | undefined;
/**
 * An HTTP GET of `url`, such as a health endpoint: no body, no headers of the plugin's,
 * no redirect followed (a 3xx comes back as the response), no proxy. Returns `denied`
 * unless an `adopt.grants.fetch` grant allows the URL: one equal to it, or a prefix
 * ending in `*` under which it is a plain path (ASCII letters, digits and `-._~/`; no
 * `.`, `..` or empty segment, percent-encoding, backslash, user information or `#`; a
 * query of letters, digits and `-._~=&/,:`). `timed-out` when no answer came within the
 * host's bound (5 s by default on a live mesh), `unavailable` when nothing answers
 * (refused, unresolved, unreachable); this host gives `failed` only where a test's
 * simulated mesh is told to.
 */
export function fetch(url: string): Response;
/**
 * Which of these reads the manifest's grants would not allow, one line each naming the
 * read and the grant to add: so `check` can refuse before anything moves, by the very
 * rules the host will deny `adopt`'s reads by. Asks nothing of the mesh; allowed
 * anywhere; empty when every read is granted. Every ungranted inspect in the order
 * given, then every ungranted fetch, each one of:
 * 
 * ```text
 * inspect container `NAME`: add "NAME" to `adopt.grants.inspect` in manifest.json
 * fetch `URL`: add "URL" to `adopt.grants.fetch` in manifest.json
 * inspect container `NAME`: no manifest can grant it (WHY)
 * fetch `URL`: no manifest can grant it (WHY)
 * ```
 * 
 * the last two for a name or URL no grant could allow, WHY being one of
 * "inspect grant `NAME` is not a container name" (a container name is letters, digits,
 * `-`, `_` and `.`, not empty and not `..`) and "fetch grant `URL` is not an http(s) URL
 * or a prefix of one with a host".
 */
export function ungranted(inspect: Array<string>, fetch: Array<string>): Array<string>;
export type HostError = import('./mesh-adopt-types.js').HostError;
/**
 * What a container is running.
 */
export interface ContainerState {
  /**
   * The image it was created from.
   */
  image: string,
  /**
   * Whether it is up.
   */
  running: boolean,
}
/**
 * The answer to a `fetch`.
 */
export interface Response {
  /**
   * The HTTP status code, whatever it is: a 3xx, 4xx or 5xx is an answer, not an
   * error.
   */
  status: number,
  /**
   * The body as text (bytes that are not UTF-8 replaced by U+FFFD), cut on a character
   * boundary at the host's limit, 64 KiB (`limits.fetch_body_bytes`).
   */
  body: string,
}
