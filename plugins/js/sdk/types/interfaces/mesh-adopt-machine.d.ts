/** @module Interface mesh:adopt/machine@0.1.0 **/
/**
 * Asks the node what a container runs; none when there is no such container.
 */
export function inspect(container: string): ContainerState | undefined;
/**
 * An HTTP GET, such as a health endpoint.
 */
export function fetch(url: string): Response;
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
