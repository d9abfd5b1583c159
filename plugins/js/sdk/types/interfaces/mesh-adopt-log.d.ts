/** @module Interface mesh:adopt/log@0.2.0 **/
/**
 * One line for the operator, shown prefixed with the module's name, control characters
 * and escape sequences made visible. A line over 4 KiB is cut (`… (cut)`); past 1 000
 * lines said by one instance (`limits.say_lines`) the plugin is stopped. Allowed
 * anywhere.
 */
export function say(line: string): void;
