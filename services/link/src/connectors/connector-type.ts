import type { TObject } from '@sinclair/typebox';
import type { Outbound } from '@msp/outbound';
import type { Directory } from '../runs/directory';
import type { SyncSource } from '../syncs/sync.mirror';
import type { ConnectorRecord, ConnectorType } from './connectors.repository';

/**
 * What a connector keeps of its `config` besides the sealed secret, in the columns as they are:
 * `base_url`, and `settings`, the rest in a shape only its type knows (null when there is none).
 */
export type ConnectorSettings = Pick<ConnectorRecord, 'baseUrl' | 'settings'>;

/** A connector's settings with its secret opened: what a type needs to talk to its directory. */
export interface Connection {
  settings: ConnectorSettings;
  /** In clear: connector-directories opens it, only for the client that sends it. */
  secret: string;
  outbound: Outbound;
}

/** A directory's failure in words, whether to try again, and how long it asked to wait. */
export interface DirectoryFailure {
  message: string;
  kind: string;
  retryable: boolean;
  retryAfterMs?: number;
  /** A name a person acts on (LDAP: `password_policy`, `ou_missing`, …), which run tasks and sync errors lead with. */
  name?: string;
}

/**
 * Everything that differs between connector types, so that the service, the routes, the sync
 * runner and connector-directories look a type up (connector-types.ts) instead of branching on it.
 */
export interface ConnectorTypeDefinition<T extends ConnectorType = ConnectorType> {
  type: T;
  /** The `type` enum's words on it, and on its create `config` (the OpenAPI descriptions join every type's). */
  describe: { type: string; config: string };
  /** Its `config`: on POST (every member it has, `required` the ones it needs), on PATCH, and in responses. */
  schemas: { create: TObject; patch: TObject; view: TObject };
  /** The write-only member of its `config` (stored sealed), and its name in messages. */
  secret: { field: string; name: string };
  /** The settings a create's `config` gives; its `settings` are what the type's other members read back. */
  settingsFrom(config: Record<string, unknown>): ConnectorSettings;
  /** The settings a PATCH's `config` changes, over the current ones; the omitted are left out. */
  changesFrom(config: Record<string, unknown>, current: ConnectorSettings): Partial<ConnectorSettings>;
  /** The `config` members that say where link connects: a PATCH that sets none of them is not checked again. */
  reachedThrough: readonly string[];
  /** Refuses (an AppError, 422) settings that would have link call where it may not, or bind in clear. */
  assertReachable(settings: ConnectorSettings, outbound: Outbound): Promise<void>;
  /** The `config` a response shows: the secret only said to be set. */
  configJson(settings: ConnectorSettings): Record<string, unknown>;
  /** What a sync reads. */
  syncSource(connection: Connection, options: { signal?: AbortSignal; pageSize?: number }): SyncSource;
  /** A live check of the directory (null when it works, else why not); absent for types that cannot be checked at once. */
  probe?(connection: Connection): Promise<string | null>;
  /** The directory runs act on; `seal` seals what leaves it that only link may read (an initial password). */
  open(connection: Connection, seal: (clear: string) => string): Directory;
  /** The failure when `error` is one of this type's directory errors, else null. */
  failureOf(error: unknown): DirectoryFailure | null;
}
