// The fake host the tests drive: records every call, answers from `host.answer`, fails a
// call with a WIT host-error the way the bindings do (thrown, with the error as `payload`).

/** What the host was asked, in order. */
export const host = {
  calls: [],
  said: [],
  clock: 0n,
  /** (call, args) => a value, or `{ hostError: {tag, val} }` to fail the call. */
  answer: () => undefined,
  reset(answer = () => undefined) {
    this.calls = [];
    this.said = [];
    this.clock = 0n;
    this.answer = answer;
  },
};

export class Secret {
  constructor(name) {
    this.secretName = name;
  }
  name() {
    return this.secretName;
  }
}

/** Calls the fake: records it, then answers or throws as the bindings would. */
export function call(name, ...args) {
  host.calls.push([name, ...args]);
  const answer = host.answer(name, ...args);
  if (answer !== null && typeof answer === 'object' && 'hostError' in answer) {
    const error = new Error('host error (see error.payload)');
    Object.defineProperty(error, 'payload', { value: answer.hostError });
    throw error;
  }
  return answer;
}
