import { call } from './fake-host.js';

export const inspect = (container) => call('inspect', container);
export const fetch = (url) => call('fetch', url) ?? { status: 200, body: '' };
