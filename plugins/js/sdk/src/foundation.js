/**
 * The foundation bundle genesis produced: finding the servers a module adopts in it. The
 * bundle arrives as WIT `bundle-resource` variants, `{ tag: 'container' | 'file' | 'other', val }`.
 *
 * @module
 */

import { refuse } from './refusal.js';

/** The bundle's identity for a resource. */
export function identity(resource) {
  return resource.val.id;
}

/** The bundle's kind for a resource, as a refusal would name it. */
export function kind(resource) {
  return resource.tag === 'other' ? resource.val.kind : resource.tag;
}

/**
 * The container `foundation` (`ctx.foundation`) calls `id`, refusing when it is absent
 * (listing what the bundle declares) or is not one; `what` names the server for the operator.
 */
export function container(foundation, id, what, module) {
  const found = foundation.find((r) => identity(r) === id);
  if (found === undefined) {
    const listed = foundation.length === 0 ? 'nothing' : foundation.map(identity).join(', ');
    throw refuse(
      'foundation-missing',
      `the foundation bundle has no \`${id}\`, so there is no ${what} for the \`${module}\` module to adopt; the bundle declares: ${listed}`,
    );
  }
  if (found.tag !== 'container') {
    throw refuse(
      'foundation-not-a-container',
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
 * raises a second server beside the bundle's and any other image replaces it. `what` names
 * the server for the operator ("store"); `differentImage` says what another image would do
 * and what to do instead.
 */
export function adoptInPlace(ctx, id, what, differentImage) {
  const module = ctx.module;
  const raised = container(ctx.foundation, id, what, module);
  const server = ctx.manifest.containers.find((c) => c.name === raised.name);
  if (server === undefined) {
    throw refuse(
      'container-not-declared',
      `the \`${module}\` module declares no container named \`${raised.name}\`, so nothing in it adopts the ` +
        `foundation's ${what}; its server container must carry the name genesis raised`,
    );
  }
  if (server.image !== raised.image) {
    throw refuse(
      'image-differs',
      `the \`${module}\` module's container \`${raised.name}\` is pinned to image \`${server.image}\`, but the foundation's ${what} ` +
        `runs \`${raised.image}\`. Adopting in place needs the same image: ${differentImage}. Nothing has been ` +
        'registered',
    );
  }
  return raised;
}

/** The path of the file the bundle calls `id`, or "" when it declares none. */
export function filePath(foundation, id) {
  const file = foundation.find((r) => r.tag === 'file' && r.val.id === id);
  return file === undefined ? '' : file.val.path;
}

/** Volumes (`host:inside[:opts]`) as a map from each inside path to its host path. */
export function mounts(volumes) {
  const at = new Map();
  for (const v of volumes) {
    const [host, inside] = v.split(':');
    if (inside !== undefined) at.set(inside, host);
  }
  return at;
}
