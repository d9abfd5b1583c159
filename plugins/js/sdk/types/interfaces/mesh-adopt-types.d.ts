/** @module Interface mesh:adopt/types@0.1.0 **/
/**
 * Why a host call did not do what the plugin asked; the plugin decides whether that is
 * fatal, so the host never aborts a plugin for an ordinary "no".
 */
export type HostError = HostErrorDenied | HostErrorFailed | HostErrorTimedOut | HostErrorUnavailable;
/**
 * The host's grants do not allow this call; the text names the capability and how
 * to grant it.
 */
export interface HostErrorDenied {
  tag: 'denied',
  val: string,
}
/**
 * The mesh was asked and said no; the text is what it answered.
 */
export interface HostErrorFailed {
  tag: 'failed',
  val: string,
}
/**
 * No answer came within the call's timeout; the text names the call and the limit.
 */
export interface HostErrorTimedOut {
  tag: 'timed-out',
  val: string,
}
/**
 * The thing asked for is not there to be asked (no such credential, no engine).
 */
export interface HostErrorUnavailable {
  tag: 'unavailable',
  val: string,
}
/**
 * A container the foundation bundle declares, as genesis raised it.
 */
export interface Container {
  /**
   * The bundle's identity for it, e.g. `store` or `broker`.
   */
  id: string,
  /**
   * The container's name on the node; the node-engine keys on it.
   */
  name: string,
  /**
   * The image it was raised from.
   */
  image: string,
  /**
   * Its mounts, each `host:inside[:opts]`.
   */
  volumes: Array<string>,
}
/**
 * A file the foundation bundle declares, such as the bus's first user list.
 */
export interface File {
  /**
   * The bundle's identity for it, e.g. `bus-accounts`.
   */
  id: string,
  /**
   * Where the file lives on the node.
   */
  path: string,
}
/**
 * A bundle resource of a kind plugins need not understand, kept so refusals can name it.
 */
export interface Other {
  /**
   * The bundle's identity for it.
   */
  id: string,
  /**
   * Its kind as the bundle spells it.
   */
  kind: string,
}
/**
 * One resource of the foundation bundle, typed so plugins do not re-parse the bundle.
 */
export type BundleResource = BundleResourceContainer | BundleResourceFile | BundleResourceOther;
export interface BundleResourceContainer {
  tag: 'container',
  val: Container,
}
export interface BundleResourceFile {
  tag: 'file',
  val: File,
}
export interface BundleResourceOther {
  tag: 'other',
  val: Other,
}
/**
 * Where a builder clones the catalogue from; distinct from the local checkout the host
 * reads manifests out of.
 */
export interface CatalogSource {
  /**
   * The repository a builder clones.
   */
  repository: string,
  /**
   * The ref to build; the plugin picks the default when absent.
   */
  ref?: string,
}
/**
 * The operator's choices for this run.
 */
export interface Options {
  /**
   * The node the module is assigned to and pushed on.
   */
  node: string,
  /**
   * Where the module is built from; absent when the operator gave none.
   */
  catalogSource?: CatalogSource,
  /**
   * How long to wait for the node to settle after a push, in seconds.
   */
  waitSeconds: number,
}
/**
 * Everything a plugin decides from; the same value reaches `check` and `adopt`.
 */
export interface Context {
  /**
   * The catalogue module this plugin adopts, e.g. `postgres`.
   */
  module: string,
  /**
   * The module's `manifest.json`, byte for byte, so the plugin carries exactly what
   * the catalogue ships.
   */
  manifest: Uint8Array,
  /**
   * The foundation bundle genesis produced.
   */
  foundation: Array<BundleResource>,
  /**
   * The operator's options.
   */
  options: Options,
}
/**
 * What `adopt` would do, for an operator to review before anything happens.
 */
export interface Plan {
  /**
   * What will be adopted in place, kept or changed, in the plugin's words.
   */
  summary: Array<string>,
  /**
   * The control-plane commands `adopt` will tell, in order.
   */
  commands: Array<Array<string>>,
}
/**
 * What `adopt` did.
 */
export interface Report {
  /**
   * One line for the operator's summary.
   */
  summary: string,
}
/**
 * Why a plugin will not (or could not) adopt its module. The message names both sides
 * of any difference and says what was and was not done.
 */
export interface Refusal {
  message: string,
}
