// Types for @mesh-adopt/sdk's own API. The WIT shapes (Context, Plan, …) are generated from
// wit/adopter.wit by `npm run types` (jco types) into types/; this file is written by hand.

import type {
  BundleResource,
  Command,
  Container,
  Context,
  HostError,
  Plan,
  Report,
} from './types/interfaces/mesh-adopt-types.js';
import type { ContainerState, Response } from './types/interfaces/mesh-adopt-machine.js';
import type { Secret } from './types/interfaces/mesh-adopt-control.js';

export type {
  Adoption,
  AdoptedAs,
  Build,
  BundleResource,
  CatalogSource,
  Command,
  Container,
  Context,
  File,
  Grants,
  HostError,
  Manifest,
  Options,
  Other,
  Placement,
  Plan,
  Report,
  SecretAccept,
} from './types/interfaces/mesh-adopt-types.js';
export type { ContainerState, Response } from './types/interfaces/mesh-adopt-machine.js';
export type { Secret } from './types/interfaces/mesh-adopt-control.js';

/** The WIT package this SDK is built against: `mesh:adopt@0.2.0`. */
export const WIT_PACKAGE: string;
/** The world a plugin built with this SDK targets: what a manifest's `adopt.world` names. */
export const WORLD: string;

/** A module's adoption rules: what {@link exportPlugin} registers. Both are given the context `init` was handed. */
export interface Plugin {
  /** Decides, changing nothing, whether and how the module can be adopted. Throws a Refusal to refuse. */
  check(ctx: Context): Plan;
  /** Adopts the module. Throws a Refusal to refuse. */
  adopt(ctx: Context): Report;
}

/** What componentize-js maps to `result<T, refusal>`. */
export type Result<T> = { tag: 'ok'; val: T } | { tag: 'err'; val: { code: string; message: string } };

/** The `adopter` world's exports for `plugin`: `export const { init, check, adopt } = exportPlugin(p)`. */
export function exportPlugin(plugin: Plugin): {
  init(ctx: Context): void;
  check(): Result<Plan>;
  adopt(): Result<Report>;
};

/** A refusal, thrown: why a plugin will not (or could not) adopt its module. */
export class Refusal extends Error {
  constructor(code: string, message: string);
  /** Its kind, kebab-case and stable, e.g. `image-differs`. */
  readonly code: string;
  /** The WIT `refusal` record. */
  toRecord(): { code: string; message: string };
}
/** Builds a refusal, to `throw refuse('bus-gone', '...')`. */
export function refuse(code: string, message: string): Refusal;

/** The host's kinds of "no", as the WIT `host-error` tags them. */
export const ErrorKind: {
  readonly Denied: 'denied';
  readonly Failed: 'failed';
  readonly TimedOut: 'timed-out';
  readonly Unavailable: 'unavailable';
};
export type ErrorKindTag = HostError['tag'];

/** A failed host call; its message is `failed to <call>: <reason>`, its code `call-<kind>`. */
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
/** A command as the operator would type it, for messages. */
export function words(command: Command): string;
/** A command as a refusal quotes it, cut after 200 characters. */
export function quoted(command: Command): string;
/** How long an ordinary control-plane command may take, in seconds (60). */
export const TELL_TIMEOUT_SECONDS: number;
/** Shows a line to the operator. */
export function say(line: string): void;
/** Milliseconds since the run began, on the host's clock. */
export function nowMillis(): number;
/** Waits on the host's clock. */
export function sleepMillis(millis: number): void;
/** Tells one command with the ordinary timeout; returns its output. */
export function tell(command: Command): string;
/** Tells one command, allowing it `timeoutSeconds`. */
export function tellWithin(command: Command, timeoutSeconds: number): string;
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
/** How long a plugin lets the build command take, in seconds (1500). */
export const BUILD_TIMEOUT_SECONDS: number;

/** One module's provider sequence: the plan's commands and the calls, from one value. */
export class Provider {
  constructor(ctx: Context, buildNote?: string);
  readonly ctx: Context;
  readonly buildNote: string;
  manifestRemote(): string;
  beforeOwnStep(): Command[];
  /** The commands the sequence tells, `beforePush` before the push. */
  commands(beforePush?: Command[]): Command[];
  /** Runs the sequence, `beforePush` just before the push. */
  install(beforePush?: () => void): void;
}
/** The `secret accept …` command for `secret`, from `/accepting-<secret>`. */
export function acceptCommand(ctx: Context, secret: string): Command;

/** A genesis credential handed over as a module secret before the push. */
export class Handover {
  constructor(ctx: Context, secret: string, credential: string, what: string);
  command(): Command;
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

/** Inside path → host path, from `host:inside[:opts]` volumes. */
export function mounts(volumes: string[]): Map<string, string>;

/** The containers and URLs `adopt` reads, checked in `check` against the manifest's grants. */
export class Reads {
  inspect(name: string): this;
  fetch(url: string): this;
  /** What the host says the grants would deny, one line each. */
  ungranted(): string[];
  /** Refuses (`not-granted`) when the host would deny a read. */
  check(ctx: Context): void;
}
