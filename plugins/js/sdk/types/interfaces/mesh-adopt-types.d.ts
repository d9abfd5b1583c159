/** @module Interface mesh:adopt/types@0.2.0 **/
/**
 * Why a host call did not do what the plugin asked; the plugin decides whether that is
 * fatal, so the host never aborts a plugin for an ordinary "no". Each import below says
 * which it returns, and when.
 */
export type HostError = HostErrorDenied | HostErrorFailed | HostErrorTimedOut | HostErrorUnavailable;
/**
 * The host would not make the call: the grants do not allow it, it is an effect and
 * `check` may only read, it is not the plan's next step, it breaks a limit. The text
 * names the call and why, and how to grant it where a manifest can ("inspect of
 * container `mesh-bus` is not granted to the `nats` plugin: a catalogue grants it by
 * listing it in `adopt.grants.inspect` of" and the manifest's path), or says that no
 * grant widens it.
 */
export interface HostErrorDenied {
  tag: 'denied',
  val: string,
}
/**
 * The mesh was asked and said no; the text is what it answered (from a live control
 * plane: the command, "exited with status 1", and the first lines of its error
 * output).
 */
export interface HostErrorFailed {
  tag: 'failed',
  val: string,
}
/**
 * No answer came within the call's timeout; the text names the call and the limit.
 * What was asked may still have happened.
 */
export interface HostErrorTimedOut {
  tag: 'timed-out',
  val: string,
}
/**
 * The thing asked for is not there to be asked: no such credential, nothing answering
 * at a URL, a mesh the host cannot reach.
 */
export interface HostErrorUnavailable {
  tag: 'unavailable',
  val: string,
}
/**
 * A container as the foundation bundle or a manifest declares it.
 */
export interface Container {
  /**
   * Its declarer's identity for it: the bundle's (`store`) or the manifest's (`server`).
   */
  id: string,
  /**
   * The container's name on the node; the node-engine keys on it.
   */
  name: string,
  /**
   * The image it runs, or is pinned to.
   */
  image: string,
  /**
   * Its mounts, each `host:inside[:opts]`; a manifest's with `${access:<id>}` resolved,
   * the bundle's as genesis mounted them.
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
 * One resource of the foundation bundle (`foundation.json`'s `resources`, in order),
 * typed so plugins do not re-parse the bundle: `kind: "container"` is a `container`
 * (`id`, `name`, `image`, `volumes`; its `credentials` and any other field are not
 * passed), `kind: "file"` a `file` (`id`, `path`), any other kind an `other`; a kind
 * spelt as one of these in another case (`Container`) is taken for a mistake, and the
 * host refuses the bundle before any plugin runs.
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
 * How a module's push treats a container it takes over from genesis: the manifest's
 * `how`, `"kept"` or `"recreated"`.
 * # Variants
 * 
 * ## `"kept"`
 * 
 * Left running as genesis raised it: same image, same volumes.
 * ## `"recreated"`
 * 
 * Recreated once onto another image, on exactly the volumes genesis gave it.
 */
export type AdoptedAs = 'kept' | 'recreated';
/**
 * One container genesis raised that the module takes over, as its manifest's `adopts`
 * declares it: what the host holds the module's push to.
 */
export interface Adoption {
  /**
   * The foundation bundle's id for the container taken over, e.g. `store`.
   */
  foundation: string,
  /**
   * The id of the manifest's own container that takes its place, e.g. `server`.
   */
  container: string,
  /**
   * Whether the push keeps it or recreates it.
   */
  how: AdoptedAs,
  /**
   * The genesis credential the running container was created with, if it needs one;
   * none when the entry has no `credential`.
   */
  credential?: string,
  /**
   * The module secret that carries `credential` in; none when the entry has no
   * `secret` (a manifest gives both or neither).
   */
  secret?: string,
}
/**
 * What the catalogue grants the plugin to read beyond the host's defaults: the
 * manifest's `adopt.grants`, each list empty when absent.
 */
export interface Grants {
  /**
   * Genesis credentials it may carry in, by name (`credentials`).
   */
  credentials: Array<string>,
  /**
   * Containers it may inspect, by name (`inspect`).
   */
  inspect: Array<string>,
  /**
   * URLs it may fetch: exact, or a prefix ending in `*` (`fetch`).
   */
  fetch: Array<string>,
}
/**
 * The module's manifest as the host read it, so no plugin carries a JSON parser or can
 * read the manifest differently from the host. Each field is the `manifest.json` field
 * named beside it, empty when absent. Left out (still in `context.manifest-bytes`):
 * `version`, `accesses` (other than through volumes), resources whose `type` is not
 * `container`, every field of a container other than `id`, `name`, `image` and `volumes`
 * (`environment`, `command`, `labels`…, which the node still compares), `adopt` other
 * than its `grants` (`plugin`, `sha256`, `world`, `source`), and any other key. The host
 * calls `init` only with a manifest it has verified: its `name` is its directory's, no
 * key is given twice, each container has an image and a name no command could misread,
 * each `${access:…}` names an access, each grant is well-formed. What `adopts` declares
 * is held to the foundation once `check` has planned.
 */
export interface Manifest {
  /**
   * The module's name (`name`).
   */
  name: string,
  /**
   * The resources of `type` `container`, in order (`resources`), each volume's
   * `${access:<id>}` replaced by the `path` of the `accesses` entry of that `id`, as a
   * node would raise them.
   */
  containers: Array<Container>,
  /**
   * The secrets it declares (`secrets`); the node seals any not accepted before its
   * push.
   */
  secrets: Array<string>,
  /**
   * Subjects it speaks on the bus (`bus-subjects`); a module with none is issued no
   * account.
   */
  busSubjects: Array<string>,
  /**
   * For a bus: the file its user list lives in (`bus-users`); empty for any other
   * module.
   */
  busUsers: string,
  /**
   * The containers genesis raised that it takes over, and how (`adopts`).
   */
  adopts: Array<Adoption>,
  /**
   * What its `adopt.grants` grant the plugin.
   */
  grants: Grants,
}
/**
 * Where a builder clones the catalogue from; distinct from the local checkout the host
 * reads manifests out of. The operator's `REPO@REF` splits at its last `@` when what
 * follows holds no `:` or `/`: `ssh://git@host/x.git@v1` is repository
 * `ssh://git@host/x.git` at ref `v1`, `git@host:org/x.git` a repository with no ref.
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
   * The node the module is assigned to and pushed on (`--node`, `node-1` by default).
   */
  node: string,
  /**
   * Where the module is built from (`--catalog-source REPO[@REF]`); absent when the
   * operator gave none, its `ref` absent when they gave no `@REF` (the provider
   * sequence then builds `main`).
   */
  catalogSource?: CatalogSource,
  /**
   * How long to wait for the node to settle after a push, in whole seconds (`--wait`,
   * 120 by default).
   */
  waitSeconds: number,
}
/**
 * Everything a plugin decides from, handed once to `init`.
 */
export interface Context {
  /**
   * The catalogue module this plugin adopts, e.g. `postgres`: its directory's name,
   * which is its manifest's `name`.
   */
  module: string,
  /**
   * The module's manifest, parsed.
   */
  manifest: Manifest,
  /**
   * The same manifest byte for byte, so the plugin carries exactly what the catalogue
   * ships when it registers the module.
   */
  manifestBytes: Uint8Array,
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
 * A module and the node a command places it on.
 */
export interface Placement {
  /**
   * The node, e.g. `node-1`.
   */
  node: string,
  /**
   * The module, e.g. `postgres`.
   */
  module: string,
}
/**
 * What `build` builds: the module's directory of a catalogue repository at a ref.
 */
export interface Build {
  /**
   * The repository a builder clones.
   */
  repository: string,
  /**
   * The module, built from `modules/<module>`.
   */
  module: string,
  /**
   * The ref to build.
   */
  ref: string,
}
/**
 * A secret accepted into a module from where it was carried.
 */
export interface SecretAccept {
  /**
   * The node the module is assigned to.
   */
  node: string,
  /**
   * The module accepting it.
   */
  module: string,
  /**
   * The module's secret, one its manifest declares.
   */
  secret: string,
  /**
   * The control-plane path it was carried to: `/accepting-<secret>`.
   */
  source: string,
}
/**
 * One control-plane command, typed so the plugin, the host's grants and the control
 * plane cannot read it differently. Every name in it must be a plain word: not empty,
 * not starting with `-`, no `..`, no whitespace or control characters.
 * 
 * What a plugin may tell is fixed by the host, and no manifest widens it: its own
 * module's provider sequence on the operator's node. `module-add` of
 * `/<module>-module.json`; `build` of the operator's catalogue source and ref (`main`
 * when it names none) for its own module; `module-issue`, `assign`, `prepare` of its own
 * module on the operator's node; `secret-accept` of a secret its manifest declares, from
 * `/accepting-<secret>`; `push` of the operator's node.
 */
export type Command = CommandModuleAdd | CommandBuild | CommandModuleIssue | CommandAssign | CommandPrepare | CommandSecretAccept | CommandPush;
/**
 * `module add <remote>`: registers the manifest carried to `remote`
 * (`/<module>-module.json`).
 */
export interface CommandModuleAdd {
  tag: 'module-add',
  val: string,
}
/**
 * `build <repository> --path modules/<module> --ref <ref> --wait 1200s`.
 */
export interface CommandBuild {
  tag: 'build',
  val: Build,
}
/**
 * `module issue <module> --node <node>`: a bus account; refused for a module with
 * no bus subjects, which the provider sequence goes on without.
 */
export interface CommandModuleIssue {
  tag: 'module-issue',
  val: Placement,
}
/**
 * `assign <node> <module>`.
 */
export interface CommandAssign {
  tag: 'assign',
  val: Placement,
}
/**
 * `prepare <node> <module>`.
 */
export interface CommandPrepare {
  tag: 'prepare',
  val: Placement,
}
/**
 * `secret accept <node> <module> <secret> --from <source>`.
 */
export interface CommandSecretAccept {
  tag: 'secret-accept',
  val: SecretAccept,
}
/**
 * `push <node>`.
 */
export interface CommandPush {
  tag: 'push',
  val: string,
}
/**
 * What `adopt` would do, for an operator to review before anything happens.
 */
export interface Plan {
  /**
   * What will be adopted in place, kept or changed, in the plugin's words; at most 64
   * lines (`limits.plan_summary_lines`), each shown to the operator.
   */
  summary: Array<string>,
  /**
   * The control-plane commands `adopt` will tell, in order; at most 64
   * (`limits.plan_commands`). Preflight holds each to what the plugin may tell (see
   * `command`) and refuses one holding a credential's value, and a plan that builds
   * needs a wall deadline past the build's 1500 s plus `--wait`: any of these makes
   * the module unusable before anything moves.
   */
  commands: Array<Command>,
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
 * Why a plugin will not (or could not) adopt its module.
 */
export interface Refusal {
  /**
   * The refusal's kind, stable across releases so an installer or a scenario can act
   * on it: kebab-case (`image-differs`, `no-catalogue-source`), documented by the
   * plugin. The host stops a plugin whose code is not kebab-case (lowercase letters and
   * digits in words joined by `-`), is longer than 64 bytes, or is one of the host's
   * own: `plan-changed`, `went-on-past-a-failure`, `redacted`.
   */
  code: string,
  /**
   * For the operator: names both sides of any difference and says what was and was
   * not done. Shown cut at 16 KiB.
   */
  message: string,
}
