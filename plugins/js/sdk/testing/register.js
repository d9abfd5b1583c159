// Maps the `mesh:adopt/*` imports to a fake host, so the SDK's logic runs under `node --test`
// without componentizing: `node --import ./testing/register.js --test test/*.test.js`.
import { register } from 'node:module';

register('./hooks.js', import.meta.url);
