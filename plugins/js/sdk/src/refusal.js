/**
 * Refusals: why a plugin will not (or could not) adopt its module.
 *
 * @module
 */

/**
 * A refusal, thrown. `check` and `adopt` throw it (or a subclass: a failed host call, a wait
 * that timed out) instead of returning an error value, so a refusal deep in a helper needs no
 * plumbing; the export made by {@link exportPlugin} turns it into the `err` side of the WIT
 * `result<_, refusal>`. It is an `Error`, so a stack is at hand while debugging.
 */
export class Refusal extends Error {
  /** @param {string} message what the operator reads: both sides of any difference, and what was and was not done */
  constructor(message) {
    super(message);
    this.name = 'Refusal';
  }

  /** The WIT `refusal` record this stands for. */
  toRecord() {
    return { message: this.message };
  }
}

/**
 * Builds a refusal from a message, to `throw refuse(...)`: the operator reads the reason
 * rather than a trap.
 *
 * @param {string} message
 * @returns {Refusal}
 */
export function refuse(message) {
  return new Refusal(String(message));
}
