/**
 * The foundation bundle genesis produced: finding the servers a module adopts in it.
 *
 * The bundle arrives as WIT `bundle-resource` variants, `{ tag: 'container' | 'file' | 'other',
 * val }`, so plugins never re-parse the bundle.
 *
 * @module
 */

import { readManifest } from './manifest.js';
import { refuse } from './refusal.js';

/**
 * The bundle's identity for a resource.
 *
 * @param {{tag: string, val: {id: string}}} resource
 */
export function identity(resource) {
  return resource.val.id;
}

/**
 * The bundle's kind for a resource, as a refusal would name it.
 *
 * @param {{tag: string, val: {kind?: string}}} resource
 */
export function kind(resource) {
  return resource.tag === 'other' ? resource.val.kind : resource.tag;
}

/**
 * Finds the container the bundle calls `id`, refusing when it is absent (listing what the
 * bundle does declare) or is not a container. `what` names the server for the operator.
 *
 * @param {import('../index.js').BundleResource[]} foundation `ctx.foundation`
 * @param {string} id
 * @param {string} what
 * @param {string} module
 * @returns {import('../index.js').Container}
 */
export function container(foundation, id, what, module) {
  const found = foundation.find((r) => identity(r) === id);
  if (found === undefined) {
    const listed = foundation.length === 0 ? 'nothing' : foundation.map(identity).join(', ');
    throw refuse(
      `the foundation bundle has no \`${id}\`, so there is no ${what} for the \`${module}\` module to adopt; the bundle declares: ${listed}`,
    );
  }
  if (found.tag !== 'container') {
    throw refuse(
      `the foundation bundle's \`${id}\` is a ${kind(found)}, not a container: the \`${module}\` module has no ${what} to adopt`,
    );
  }
  return found.val;
}

/**
 * The container the bundle calls `id`, once the module's manifest is known to adopt it in
 * place: it declares a container of the same name, pinned to the same image.
 *
 * The node-engine keys containers on their name and compares a spec digest, so any other name
 * raises a second server beside the bundle's and any other image replaces it. Refuses naming
 * both sides; `what` names the server for the operator ("store") and `differentImage` says
 * what another image would do and what to do instead.
 *
 * @param {import('../index.js').Context} ctx
 * @param {string} id
 * @param {string} what
 * @param {string} differentImage
 * @returns {import('../index.js').Container}
 */
export function adoptInPlace(ctx, id, what, differentImage) {
  const module = ctx.module;
  const declared = readManifest(module, ctx.manifest);
  const raised = container(ctx.foundation, id, what, module);
  const server = declared.containers().find((c) => c.name === raised.name);
  if (server === undefined) {
    throw refuse(
      `the \`${module}\` module declares no container named \`${raised.name}\`, so nothing in it adopts the ` +
        `foundation's ${what}; its server container must carry the name genesis raised`,
    );
  }
  if (server.image !== raised.image) {
    throw refuse(
      `the \`${module}\` module's container \`${raised.name}\` is pinned to image \`${server.image}\`, but the foundation's ${what} ` +
        `runs \`${raised.image}\`. Adopting in place needs the same image: ${differentImage}. Nothing has been ` +
        'registered',
    );
  }
  return raised;
}

/**
 * The path of the file the bundle calls `id`, or "" when it declares none.
 *
 * @param {import('../index.js').BundleResource[]} foundation
 * @param {string} id
 * @returns {string}
 */
export function filePath(foundation, id) {
  const file = foundation.find((r) => r.tag === 'file' && r.val.id === id);
  return file === undefined ? '' : file.val.path;
}
