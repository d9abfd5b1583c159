import { call } from './fake-host.js';

export const inspect = (container) => call('inspect', container);
export const fetch = (url) => call('fetch', url) ?? { status: 200, body: '' };
// The host's answer is set by the test; by default every read is granted.
export const ungranted = (inspect, fetch) => call('ungranted', inspect, fetch) ?? [];
