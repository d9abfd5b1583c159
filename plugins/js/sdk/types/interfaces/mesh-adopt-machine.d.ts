/** @module Interface mesh:adopt/machine@0.2.0 **/
/**
 * Asks the node what a container runs; none when there is no such container.
 */
export function inspect(container: string): ContainerState | undefined;
/**
 * An HTTP GET, such as a health endpoint.
 */
export function fetch(url: string): Response;
/**
 * Which of these reads the manifest's grants would not allow, one line each naming the
 * read and the grant to add: so `check` can refuse before anything moves, by the very
 * rules the host will deny `adopt`'s reads by. Asks nothing of the mesh; empty when
 * every read is granted.
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
   * The HTTP status code.
   */
  status: number,
  /**
   * The body, cut to the host's size limit.
   */
  body: string,
}
