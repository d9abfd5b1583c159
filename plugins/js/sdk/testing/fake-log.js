import { host } from './fake-host.js';

export const say = (line) => {
  host.said.push(line);
};
