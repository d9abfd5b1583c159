/** @module Interface mesh:adopt/clock@0.2.0 **/
/**
 * Milliseconds since the run began.
 */
export function now(): bigint;
/**
 * Waits this many milliseconds; a wait that would end past the call's wall deadline
 * stops the plugin at the deadline. Not counted as the plugin's compute time.
 */
export function sleep(millis: bigint): void;
