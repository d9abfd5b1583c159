/**
 * Refusals: why a plugin will not (or could not) adopt its module.
 *
 * @module
 */

/**
 * A refusal, thrown: `check` and `adopt` throw it (or a subclass: a failed host call, a wait
 * that timed out) and the exports turn it into the `err` side of the WIT result. `code` is its
 * kind, kebab-case and stable (`image-differs`), for an installer or a scenario to act on;
 * `message` is what the operator reads.
 */
export class Refusal extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'Refusal';
    this.code = code;
  }

  /** The WIT `refusal` record this stands for. */
  toRecord() {
    return { code: this.code, message: this.message };
  }
}

/** Builds a refusal, to `throw refuse('bus-gone', '...')`. */
export function refuse(code, message) {
  return new Refusal(String(code), String(message));
}
