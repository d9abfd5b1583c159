/** @module Interface mesh:adopt/log@0.2.0 **/
/**
 * One line for the operator, shown prefixed with the module's name.
 */
export function say(line: string): void;
