// An adoption plugin in JavaScript, built with componentize-js against wit/0.1.0/adopter.wit.
//
// It shows that a component from another toolchain fits the sandbox: it loads (it imports
// wasi:http and wasi:filesystem, as componentize-js components do by default), its logs are
// kept for the report, its random numbers and clock come from the mesh, and the fetch it
// makes is stopped by the wasi:http stub.
import { say } from 'mesh:adopt/log@0.1.0';

export function check(ctx) {
  console.log(`js checks ${ctx.module}`);
  return { summary: [`js plans nothing for ${ctx.module}`], commands: [] };
}

export function adopt(ctx) {
  say(`random: ${Math.random()}`);
  say(`time: ${Date.now()}`);
  fetch('http://169.254.169.254/latest/meta-data/');
  return { summary: 'fetched through wasi:http' };
}
