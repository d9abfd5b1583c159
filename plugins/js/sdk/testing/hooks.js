// A module resolve hook: `mesh:adopt/<interface>@0.2.0` → ./fake-<interface>.js.
const IMPORT = /^mesh:adopt\/(control|machine|log|clock)@0\.2\.0$/;

export async function resolve(specifier, context, next) {
  const match = IMPORT.exec(specifier);
  if (match) return { url: new URL(`./fake-${match[1]}.js`, import.meta.url).href, shortCircuit: true };
  return next(specifier, context);
}
