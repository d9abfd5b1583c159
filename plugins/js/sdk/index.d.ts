// Types for @mesh-adopt/sdk's own API. The WIT shapes (Context, Plan, …) are generated from
// wit/adopter.wit by `npm run types` (jco types) into types/; this file is written by hand.

import type {
  BundleResource,
  Container,
  Context,
  HostError,
  Plan,
  Report,
} from './types/interfaces/mesh-adopt-types.js';
import type { ContainerState, Response } from './types/interfaces/mesh-adopt-machine.js';
import type { Secret } from './types/interfaces/mesh-adopt-control.js';

export type {
  BundleResource,
  CatalogSource,
  Container,
  Context,
  File,
  HostError,
  Options,
  Other,
  Plan,
  Report,
} from './types/interfaces/mesh-adopt-types.js';
export type { ContainerState, Response } from './types/interfaces/mesh-adopt-machine.js';
export type { Secret } from './types/interfaces/mesh-adopt-control.js';

/** The WIT package this SDK is built against: `mesh:adopt@0.1.0`. */
export const WIT_PACKAGE: string;
/** The world a plugin built with this SDK targets: what a manifest's `adopt.world` names. */
export const WORLD: string;

/** A module's adoption rules: what {@link exportPlugin} registers. */
export interface Plugin {
  /** Decides, changing nothing, whether and how the module can be adopted. Throws a Refusal to refuse. */
  check(ctx: Context): Plan;
  /** Adopts the module. Throws a Refusal to refuse. */
  adopt(ctx: Context): Report;
}

/** What componentize-js maps to `result<T, refusal>`. */
export type Result<T> = { tag: 'ok'; val: T } | { tag: 'err'; val: { message: string } };

/** The `adopter` world's exports for `plugin`: `export const { check, adopt } = exportPlugin(p)`. */
export function exportPlugin(plugin: Plugin): {
  check(ctx: Context): Result<Plan>;
  adopt(ctx: Context): Result<Report>;
};

/** A refusal, thrown: why a plugin will not (or could not) adopt its module. */
export class Refusal extends Error {
  constructor(message: string);
  /** The WIT `refusal` record. */
  toRecord(): { message: string };
}
/** Builds a refusal, to `throw refuse(...)`. */
export function refuse(message: string): Refusal;

/** The host's kinds of "no", as the WIT `host-error` tags them. */
export const ErrorKind: {
  readonly Denied: 'denied';
  readonly Failed: 'failed';
  readonly TimedOut: 'timed-out';
  readonly Unavailable: 'unavailable';
};
export type ErrorKindTag = HostError['tag'];

/** A failed host call; its message is `failed to <call>: <reason>`. */
export class HostCallError extends Refusal {
  constructor(call: string, hostError: HostError);
  /** The call as a refusal names it, e.g. ``tell `push node-1` ``. */
  readonly call: string;
  /** The host's error exactly as given. */
  readonly hostError: HostError;
  /** The host's kind of "no". */
  readonly kind: ErrorKindTag;
  /** The host's answer in words, its kind first, without the call. */
  readonly reason: string;
}

/** A host error in words, its kind first. */
export function describe(error: HostError): string;
/** A command as a refusal quotes it, cut after 200 characters. */
export function quoted(args: readonly string[]): string;
/** How long an ordinary control-plane command may take, in seconds (60). */
export const TELL_TIMEOUT_SECONDS: number;
/** Shows a line to the operator. */
export function say(line: string): void;
/** Milliseconds since the run began, on the host's clock. */
export function nowMillis(): number;
/** Waits on the host's clock. */
export function sleepMillis(millis: number): void;
/** Tells one command with the ordinary timeout; returns its output. */
export function tell(args: readonly string[]): string;
/** Tells one command, allowing it `timeoutSeconds`. */
export function tellWithin(args: readonly string[], timeoutSeconds: number): string;
/** Carries bytes into the control plane at `remote`. */
export function carryBytes(name: string, bytes: Uint8Array | string, remote: string): void;
/** Carries a secret into the control plane at `remote`. */
export function carrySecret(secret: Secret, remote: string): void;
/** A genesis credential by name. */
export function credential(name: string): Secret;
/** What a container runs; undefined when there is none. */
export function inspect(container: string): ContainerState | undefined;
/** An HTTP GET. */
export function fetch(url: string): Response;

/** The ref built when the operator names none. */
export const DEFAULT_REF: string;
/** The build's own wait (`1200s`). */
export const BUILD_WAIT: string;
/** How long a plugin lets the build command take, in seconds (1500). */
export const BUILD_TIMEOUT_SECONDS: number;
/** Where a module's manifest is carried: `/<module>-module.json`. */
export function manifestRemote(module: string): string;
/** Where a secret is carried before it is accepted: `/accepting-<secret>`. */
export function acceptingRemote(secret: string): string;
/** The provider sequence's commands, as words. */
export const Command: {
  moduleAdd(remote: string): string[];
  build(repository: string, module: string, reference: string): string[];
  moduleIssue(module: string, node: string): string[];
  assign(node: string, module: string): string[];
  prepare(node: string, module: string): string[];
  secretAccept(node: string, module: string, secret: string, from?: string): string[];
  push(node: string): string[];
};
/** Why a command's name is not a word, in the host's words, or undefined. */
export function checkWord(what: string, value: string): string | undefined;

/** One module's provider sequence: the plan's commands and the calls, from one value. */
export class Provider {
  constructor(ctx: Context, buildNote?: string);
  readonly ctx: Context;
  readonly buildNote: string;
  readonly module: string;
  readonly node: string;
  manifestRemote(): string;
  buildCommand(): string[];
  beforeOwnStep(): string[][];
  /** The commands the sequence tells, `beforePush` before the push. */
  commands(beforePush?: string[][]): string[][];
  /** Runs the sequence, `beforePush` just before the push. */
  install(beforePush?: () => void): void;
}
/** The `secret accept …` command for `secret`. */
export function acceptCommand(ctx: Context, secret: string): string[];

/** A genesis credential handed over as a module secret before the push. */
export class Handover {
  constructor(ctx: Context, secret: string, credential: string, what: string);
  command(): string[];
  summary(): string;
  /** For check: refuses unless the secret is declared and the credential can be had. */
  check(): void;
  /** For adopt: carries the credential in and accepts it. */
  deliver(): void;
}

/** A wait whose bound passed first. */
export class WaitTimedOut extends Refusal {
  constructor(what: string, timeoutMillis: number, seen?: string);
  readonly what: string;
  readonly timeoutMillis: number;
  readonly seen: string;
}
/** A duration as a refusal says it: `120s`, or `1500ms`. */
export function seconds(millis: number): string;
/** Asks `condition` until it gives a value, for at most `timeoutMillis`. */
export function waitUntil<T>(
  what: string,
  timeoutMillis: number,
  pollMillis: number,
  condition: () => T | undefined | null,
): T;
/** What a container is, as a wait asks; throws only on a denied inspect. */
export function containerState(container: string): ContainerState | undefined;
/** Waits until `container` runs `image`. */
export function waitForImage(
  container: string,
  image: string,
  timeoutMillis: number,
  pollMillis: number,
): ContainerState;

/** The bundle's identity for a resource. */
export function identity(resource: BundleResource): string;
/** The bundle's kind for a resource. */
export function kind(resource: BundleResource): string;
/** The container the bundle calls `id`, or a refusal. */
export function container(foundation: BundleResource[], id: string, what: string, module: string): Container;
/** The container the bundle calls `id`, once the manifest adopts it in place. */
export function adoptInPlace(ctx: Context, id: string, what: string, differentImage: string): Container;
/** The path of the file the bundle calls `id`, or "". */
export function filePath(foundation: BundleResource[], id: string): string;

/** The file a plugin ships as unless the manifest names another. */
export const PLUGIN_FILE: string;
/** Why bytes are not a module manifest. */
export class ParseError extends Error {}
/** One resource a module declares. */
export interface ManifestResource {
  id: string;
  kind: string;
  name: string;
  image: string;
  volumes: string[];
}
/** What a catalogue grants its plugin. */
export class Grants {
  constructor(fields?: { credentials?: string[]; inspect?: string[]; fetch?: string[] });
  credentials: string[];
  inspect: string[];
  fetch: string[];
  allowsCredential(name: string): boolean;
  allowsInspect(name: string): boolean;
  allowsFetch(url: string): boolean;
}
/** A module manifest, as adoption reads it. */
export class Manifest {
  static parse(bytes: Uint8Array | string): Manifest;
  name: string;
  resources: ManifestResource[];
  accesses: { id: string; path: string }[];
  secrets: string[];
  busSubjects: string[];
  busUsers: string;
  adopt: {
    plugin: string;
    sha256?: string;
    world?: string;
    source?: string;
    grants: Grants;
  };
  containers(): ManifestResource[];
  resolvedVolumes(container: ManifestResource): string[];
  resolvedContainers(): ManifestResource[];
}
/** Reads a module's manifest, refusing with the module's name. */
export function readManifest(module: string, bytes: Uint8Array | string): Manifest;
/** Inside path → host path, from `host:inside[:opts]` volumes. */
export function mounts(volumes: string[]): Map<string, string>;
/** Whether `url` is inside a fetch grant. */
export function withinGrant(grant: string, url: string): boolean;

/** The containers and URLs `adopt` reads, checked in `check` against the manifest's grants. */
export class Reads {
  inspect(name: string): this;
  fetch(url: string): this;
  ungranted(grants: Grants): string[];
  check(ctx: Context): void;
}
