import { SCIM_ENTERPRISE_USER_SCHEMA, ScimError, type ScimGroup, type ScimUser } from '../scim/scim-client';

/**
 * What a sync reads from a connector's directory, whatever its type: users and groups (in SCIM's
 * shape), all or those changed since a time, and whether it can filter so.
 */
export interface SyncSource {
  /**
   * Whether deltas are possible, and the directory's clock when it tells it. A directory with a
   * change counter (AD's uSNChanged) also gives its value now, as `<counter>@<whose counter>`
   * (`cursor`), and the counter's name for the runs' reasons (`cursorName`).
   */
  serviceProviderConfig(): Promise<{
    filterSupported: boolean;
    date: Date | null;
    cursor?: string | null;
    cursorName?: string;
  }>;
  /** All users, or those changed since `since` (or, given `after`, changed after that cursor). */
  listUsers(since?: Date, after?: string): AsyncIterable<ScimUser[]>;
  listGroups(since?: Date, after?: string): AsyncIterable<ScimGroup[]>;
  /** Ends what the source keeps open between its calls (LDAP: the session of one sync), if anything. */
  close?(): Promise<void>;
}

/** Whose counter a cursor is (the part after `@`): a counter of another server says nothing here. */
const cursorScope = (cursor: string) => cursor.slice(cursor.indexOf('@') + 1);
const cursorValue = (cursor: string) => (cursor.includes('@') ? cursor.slice(0, cursor.indexOf('@')) : cursor);
import type {
  MirrorGroup,
  MirrorUser,
  StoredMirrorUser,
  SyncBaseline,
  SyncOutcomeStats,
  SyncsRepository,
} from './syncs.repository';

/**
 * How one sync attempt reads the directory into the mirror: a full sync reads every User and
 * Group and marks users no longer there deleted; a delta asks only for what changed since the last
 * successful run began (`meta.lastModified gt "…"`, RFC 7644 §3.4.2.2), when the directory says it
 * filters (ServiceProviderConfig) and a full sync ran within FULL_SYNC_INTERVAL_HOURS.
 */

/**
 * A delta asks for changes since the last successful run began, less this much: the bound is the
 * directory's own clock (its HTTP Date, whole seconds) where it sends one, link's otherwise, and
 * a directory may stamp `meta.lastModified` a little before it answers (replicas, a write that
 * commits while the run starts). Re-reading a minute of changes is harmless: the upserts are
 * idempotent.
 */
export const DELTA_OVERLAP_MS = 60_000;

export const DEFAULT_FULL_SYNC_INTERVAL_MS = 24 * 3600_000;

/** The SCIM filter of a delta. */
export function modifiedSinceFilter(since: Date): string {
  return `meta.lastModified gt ${JSON.stringify(since.toISOString())}`;
}

type Plan = { mode: 'full'; reason: string } | { mode: 'delta'; since: Date; after?: string };

/** Full or delta, and why. */
export function planSync(
  baseline: SyncBaseline,
  directory: { filterSupported: boolean; reason?: string; cursor?: string | null; cursorName?: string },
  fullSyncIntervalMs: number,
  now: Date,
): Plan {
  if (!directory.filterSupported)
    return {
      mode: 'full',
      reason:
        directory.reason ??
        'the directory does not advertise filter support (ServiceProviderConfig filter.supported is not true)',
    };
  if (!baseline.lastDirectoryStartedAt || !baseline.lastFullStartedAt)
    return { mode: 'full', reason: 'no earlier successful full sync to start a delta from' };
  if (now.getTime() - baseline.lastFullStartedAt.getTime() >= fullSyncIntervalMs) {
    return {
      mode: 'full',
      reason:
        `the last full sync began at ${baseline.lastFullStartedAt.toISOString()}, FULL_SYNC_INTERVAL_HOURS ` +
        `(${round(fullSyncIntervalMs / 3600_000)}) ago or more: a full sync notices deletions`,
    };
  }
  const since = new Date(baseline.lastDirectoryStartedAt.getTime() - DELTA_OVERLAP_MS);
  if (directory.cursor) {
    const name = directory.cursorName ?? 'change counter';
    const previous = baseline.lastDirectoryCursor;
    if (!previous)
      return {
        mode: 'full',
        reason: `the last successful sync recorded no ${name} of the directory to start a delta from`,
      };
    if (cursorScope(previous) !== cursorScope(directory.cursor)) {
      return {
        mode: 'full',
        reason:
          `the last successful sync read ${cursorScope(previous)}, this one reads ` +
          `${cursorScope(directory.cursor)}: a server's ${name} says nothing about another's`,
      };
    }
    return { mode: 'delta', since, after: previous };
  }
  return { mode: 'delta', since };
}

function round(hours: number): number {
  return Math.round(hours * 1000) / 1000;
}

/** Whether the directory refused the delta's filter (400 invalidFilter, or a 400 naming the filter). */
function refusedFilter(error: unknown): boolean {
  return (
    error instanceof ScimError &&
    error.status === 400 &&
    (error.scimType === 'invalidFilter' || /filter/i.test(error.message))
  );
}

export async function synchronise(
  connectorId: string,
  client: SyncSource,
  syncs: SyncsRepository,
  baseline: SyncBaseline,
  options: { fullSyncIntervalMs: number; compareBatchSize?: number },
): Promise<SyncOutcomeStats> {
  const startedAt = new Date();
  const directory = await directoryFeatures(client);
  const directoryStartedAt = directory.date ?? startedAt;
  const directoryCursor = directory.cursor ?? null;
  const plan = planSync(baseline, directory, options.fullSyncIntervalMs, startedAt);
  if (plan.mode === 'delta') {
    try {
      const stats = await delta(connectorId, client, syncs, plan.since, plan.after);
      const modeReason = plan.after
        ? `changes after ${directory.cursorName ?? 'change counter'} ${cursorValue(plan.after)} of ` +
          `${cursorScope(plan.after)} (its highest committed value when the last successful sync began)`
        : `changes since ${plan.since.toISOString()} (the last successful sync's start by the directory's clock, less ${DELTA_OVERLAP_MS / 1000} s)`;
      return { ...stats, mode: 'delta', modeReason, deltaSince: plan.since, directoryStartedAt, directoryCursor };
    } catch (error) {
      if (!refusedFilter(error)) throw error;
      const reason = `the directory refused the delta's filter (${(error as ScimError).message}), so this run read everything`;
      return {
        ...(await full(connectorId, client, syncs, options.compareBatchSize)),
        mode: 'full',
        modeReason: reason,
        deltaSince: null,
        directoryStartedAt,
        directoryCursor,
      };
    }
  }
  return {
    ...(await full(connectorId, client, syncs, options.compareBatchSize)),
    mode: 'full',
    modeReason: plan.reason,
    deltaSince: null,
    directoryStartedAt,
    directoryCursor,
  };
}

/** Whether the directory filters, and its clock. */
async function directoryFeatures(client: SyncSource): Promise<{
  filterSupported: boolean;
  reason?: string;
  date: Date | null;
  cursor?: string | null;
  cursorName?: string;
}> {
  try {
    return await client.serviceProviderConfig();
  } catch (error) {
    // A directory without the endpoint (or one that answers it oddly) still syncs, in full.
    if (!(error instanceof ScimError) || !['not_found', 'rejected', 'invalid_response'].includes(error.kind))
      throw error;
    return {
      filterSupported: false,
      reason: `the directory's ServiceProviderConfig could not be read (${error.message}), so its filter support is unknown`,
      date: null,
    };
  }
}

type Counts = Pick<SyncOutcomeStats, 'usersSeen' | 'usersAdded' | 'usersUpdated' | 'usersRemoved' | 'groupsSeen'>;

/**
 * Reads pages into a map by SCIM id, each resource in the mirror's shape as it arrives: a resource
 * listed twice (pages shifting under a change) counts once, and only the mirror's few fields
 * stay in memory until the sync compares them, not every SCIM resource whole.
 */
async function collect<T extends { id?: unknown }, M>(
  pages: AsyncIterable<T[]>,
  valid: (item: T) => boolean,
  toMirror: (item: T) => M,
): Promise<Map<string, M>> {
  const items = new Map<string, M>();
  for await (const page of pages) for (const item of page) if (usable(item, valid)) items.set(item.id, toMirror(item));
  return items;
}

/** Whether a listed resource can be mirrored: an object with a SCIM id that `valid` accepts. */
function usable<T extends { id?: unknown }>(
  item: T | null | undefined,
  valid: (item: T) => boolean,
): item is T & { id: string } {
  return item != null && typeof item.id === 'string' && valid(item);
}

const validUser = (user: ScimUser) => typeof user.userName === 'string';
const validGroup = (group: ScimGroup) => typeof group.displayName === 'string';

/**
 * A delta's Users and Groups (with `filter`, only those it matches), read side by side: the two
 * listings do not depend on each other, so a directory that answers requests in parallel (Entra,
 * Okta, a SCIM gateway) serves a sync in the time of the longer one, not of both.
 */
function readUsersAndGroups(
  client: SyncSource,
  since?: Date,
  after?: string,
): Promise<[Map<string, MirrorUser>, Map<string, MirrorGroup>]> {
  return Promise.all([
    collect(client.listUsers(since, after), validUser, mirrorUser),
    collect(client.listGroups(since, after), validGroup, mirrorGroup),
  ]);
}

function mirrorGroup(group: ScimGroup): MirrorGroup {
  const members = (Array.isArray(group.members) ? group.members : [])
    .map((member) => member?.value)
    .filter((value): value is string => typeof value === 'string');
  return { scimId: group.id, displayName: group.displayName, members: [...new Set(members)] };
}

/** The mirror's view of a SCIM User; `groups` are the names of its own `groups` attribute (membership is added later). */
function mirrorUser(user: ScimUser): MirrorUser {
  const emails = Array.isArray(user.emails) ? user.emails : [];
  const email = (emails.find((entry) => entry?.primary) ?? emails[0])?.value ?? null;
  const enterprise = user[SCIM_ENTERPRISE_USER_SCHEMA];
  return {
    scimId: user.id,
    externalId: typeof user.externalId === 'string' ? user.externalId : null,
    userName: user.userName,
    displayName:
      user.displayName ??
      (user.name?.formatted || [user.name?.givenName, user.name?.familyName].filter(Boolean).join(' ') || null),
    email,
    active: user.active !== false,
    groups: (Array.isArray(user.groups) ? user.groups : [])
      .map((group) => group?.display)
      .filter((name): name is string => typeof name === 'string' && name.length > 0),
    department: typeof enterprise?.department === 'string' ? enterprise.department : null,
    manager: typeof enterprise?.manager?.value === 'string' ? enterprise.manager.value : null,
  };
}

/** Names of the groups each member is in. */
function membership(groups: Iterable<MirrorGroup>): Map<string, Set<string>> {
  const of = new Map<string, Set<string>>();
  for (const group of groups) {
    for (const member of group.members) {
      let names = of.get(member);
      if (!names) of.set(member, (names = new Set()));
      names.add(group.displayName);
    }
  }
  return of;
}

/** The user with the names of the groups it is a member of added to its own, sorted (as the mirror keeps them). */
function withGroups(user: MirrorUser, names: Set<string> | undefined): MirrorUser {
  return { ...user, groups: groupNames(user.groups, names) };
}

/** A user's own group names and those of the groups it is a member of, once each, sorted. */
function groupNames(own: string[], memberOf: Set<string> | undefined): string[] {
  const groups = new Set(own);
  for (const name of memberOf ?? []) groups.add(name);
  return [...groups].sort();
}

/** A stored user's fields as the mirror writes them (without its deletion time). */
function mirrorFields(user: StoredMirrorUser): MirrorUser {
  const { scimId, externalId, userName, displayName, email, active, groups, department, manager } = user;
  return { scimId, externalId, userName, displayName, email, active, groups, department, manager };
}

/** Users compared with the mirror per batch of at least this many (or the rest): one query for each. */
const COMPARE_BATCH = 1000;

/**
 * Everything: users missing from the directory are marked deleted, groups missing are dropped.
 * The users are compared with the mirror a batch at a time as the directory sends them (the
 * groups, read alongside, give their membership only at the end), so what stays in memory until
 * then is the changed users and a few references per unchanged one, not the directory and the
 * mirror whole. Nothing is written until everything is read: a sync that fails writes nothing.
 */
async function full(
  connectorId: string,
  client: SyncSource,
  syncs: SyncsRepository,
  batchSize = COMPARE_BATCH,
): Promise<Counts> {
  const listed = new ListedUsers();
  // The stored groups and ids are read while the directory is: neither waits for the other.
  const [groupsById, storedGroupList, liveIds] = await Promise.all([
    collect(client.listGroups(), validGroup, mirrorGroup),
    syncs.loadGroups(connectorId),
    syncs.liveMirrorIds(connectorId),
    compareUsers(client.listUsers(), (ids) => syncs.loadMirror(connectorId, ids), listed, batchSize),
  ]);
  const groups = [...groupsById.values()];
  const { diff, regrouped } = listed.withMembership(membership(groups));
  // Users equal to their row but for groups are rebuilt from that row: only they are read again.
  for (const user of await syncs.loadMirror(connectorId, [...regrouped.keys()]))
    diff.add(user, { ...mirrorFields(user), groups: regrouped.get(user.scimId)! });
  const markDeleted = liveIds.filter((id) => !listed.seen.has(id));

  const storedGroups = new Map(storedGroupList.map((group) => [group.scimId, group]));
  const upsertGroups = groups.filter((group) => {
    const old = storedGroups.get(group.scimId);
    return !old || !sameGroup(old, group);
  });
  const seenGroups = new Set(groups.map((group) => group.scimId));
  const removeGroups = [...storedGroups.keys()].filter((id) => !seenGroups.has(id));

  await syncs.applyMirror(connectorId, { upsert: diff.upsert, markDeleted, upsertGroups, removeGroups });
  return {
    usersSeen: listed.seen.size,
    usersAdded: diff.added,
    usersUpdated: diff.updated,
    usersRemoved: markDeleted.length,
    groupsSeen: groups.length,
  };
}

/**
 * Reads the users' pages into `listed` a batch at a time, each batch compared with its mirror rows
 * (`load`). The rows of one batch load while the directory sends the next, so the mirror's reads
 * stay off the listing's path as when it was read whole; never more than one batch waits.
 */
async function compareUsers(
  pages: AsyncIterable<ScimUser[]>,
  load: (ids: string[]) => Promise<StoredMirrorUser[]>,
  listed: ListedUsers,
  batchSize: number,
): Promise<void> {
  let batch = new Map<string, MirrorUser>();
  let previous: Promise<void> = Promise.resolve();
  const flush = async () => {
    await previous;
    const users = batch;
    batch = new Map();
    previous = load([...users.keys()]).then((rows) => listed.compare(users, rows));
    // Awaited at the next flush or the end; until then a failure must not count as unhandled.
    previous.catch(() => undefined);
  };
  for await (const page of pages) {
    for (const user of page) if (usable(user, validUser)) batch.set(user.id, mirrorUser(user));
    if (batch.size >= batchSize) await flush();
  }
  if (batch.size) await flush();
  await previous;
}

/**
 * What a full sync keeps of the users it listed, compared with their mirror rows: the ids seen,
 * the users to write whatever their membership (new, back, or changed in a field other than
 * groups), and for the others only their own groups and the stored ones, names shared, to
 * compare once the groups' members are known.
 */
class ListedUsers {
  readonly seen = new Set<string>();
  private readonly changed = new Map<string, { user: MirrorUser; added: boolean }>();
  private readonly sameButGroups = new Map<string, { own: string[]; stored: string[] }>();
  private readonly names = new Map<string, string>();

  /** A batch and its mirror rows; a user listed again (pages shifting under a change) replaces its earlier listing. */
  compare(users: Map<string, MirrorUser>, rows: StoredMirrorUser[]) {
    const stored = new Map(rows.map((row) => [row.scimId, row]));
    for (const [id, user] of users) {
      this.seen.add(id);
      this.changed.delete(id);
      this.sameButGroups.delete(id);
      const old = stored.get(id);
      if (!old || old.deletedAt) this.changed.set(id, { user, added: true });
      else if (!sameFields(old, user)) this.changed.set(id, { user, added: false });
      else this.sameButGroups.set(id, { own: this.shared(user.groups), stored: this.shared(old.groups) });
    }
  }

  /**
   * With each user's membership (`groupsOf`): the users to write, counted, and the ids (with
   * their groups now) of those whose row differs in its groups alone, for the caller to rebuild.
   */
  withMembership(groupsOf: Map<string, Set<string>>): { diff: UserDiff; regrouped: Map<string, string[]> } {
    const diff = new UserDiff();
    for (const [id, { user, added }] of this.changed) diff.write(withGroups(user, groupsOf.get(id)), added);
    const regrouped = new Map<string, string[]>();
    for (const [id, { own, stored }] of this.sameButGroups) {
      const groups = groupNames(own, groupsOf.get(id));
      if (!sameNames(stored, groups)) regrouped.set(id, groups);
    }
    return { diff, regrouped };
  }

  /** The names, each one string however many users are in its group. */
  private shared(names: string[]): string[] {
    return names.map((name) => {
      const known = this.names.get(name);
      if (known !== undefined) return known;
      this.names.set(name, name);
      return name;
    });
  }
}

/**
 * Only what changed: the Users and Groups modified since `since`. A changed group changes the
 * `groups` of its members, old and new, so those users are brought up to date too. Deletions are
 * not visible in a delta (the next full sync notices them).
 */
async function delta(
  connectorId: string,
  client: SyncSource,
  syncs: SyncsRepository,
  since: Date,
  after?: string,
): Promise<Counts> {
  const [users, groupsById] = await readUsersAndGroups(client, since, after);
  const changedGroups = [...groupsById.values()];
  if (!users.size && !changedGroups.length)
    return { usersSeen: 0, usersAdded: 0, usersUpdated: 0, usersRemoved: 0, groupsSeen: 0 };

  const storedChanged = await syncs.loadGroups(connectorId, { scimIds: changedGroups.map((group) => group.scimId) });
  const storedChangedById = new Map(storedChanged.map((group) => [group.scimId, group]));
  const upsertGroups = changedGroups.filter((group) => {
    const old = storedChangedById.get(group.scimId);
    return !old || !sameGroup(old, group);
  });
  // Users whose groups may differ: the changed users, and the old and new members of changed groups.
  const affected = new Set<string>(users.keys());
  for (const group of upsertGroups)
    for (const member of [...group.members, ...(storedChangedById.get(group.scimId)?.members ?? [])])
      affected.add(member);
  const ids = [...affected];
  // Their groups after this run: the stored groups they are in, with the changed ones replaced.
  const groupsNow = new Map(
    (await syncs.loadGroups(connectorId, { memberIds: ids })).map((group) => [group.scimId, group]),
  );
  for (const group of changedGroups) groupsNow.set(group.scimId, group);
  const groupsOf = membership(groupsNow.values());

  const before = new Map((await syncs.loadMirror(connectorId, ids)).map((user) => [user.scimId, user]));
  const diff = new UserDiff();
  for (const id of ids) {
    const listed = users.get(id);
    const old = before.get(id);
    // A member of a changed group that is not a known user (a nested group, or a user created
    // after this delta's listing) waits for the run that lists it.
    const base: MirrorUser | undefined = listed ? listed : old && !old.deletedAt ? { ...old, groups: [] } : undefined;
    if (base) diff.add(old, withGroups(base, groupsOf.get(id)));
  }
  await syncs.applyMirror(connectorId, { upsert: diff.upsert, markDeleted: [], upsertGroups });
  return {
    usersSeen: users.size,
    usersAdded: diff.added,
    usersUpdated: diff.updated,
    usersRemoved: 0,
    groupsSeen: changedGroups.length,
  };
}

/** The users to write, counted: new (or back after being marked deleted), or changed. */
class UserDiff {
  readonly upsert: MirrorUser[] = [];
  added = 0;
  updated = 0;

  add(old: StoredMirrorUser | undefined, user: MirrorUser) {
    if (!old || old.deletedAt) this.write(user, true);
    else if (!sameUser(old, user)) this.write(user, false);
  }

  /** A user known to differ from its row: new (or back) when `added`, else changed. */
  write(user: MirrorUser, added: boolean) {
    if (added) this.added++;
    else this.updated++;
    this.upsert.push(user);
  }
}

function sameUser(a: StoredMirrorUser | MirrorUser, b: MirrorUser): boolean {
  return sameFields(a, b) && sameNames(a.groups, b.groups);
}

/** Whether two users agree in everything but their groups. */
function sameFields(a: StoredMirrorUser | MirrorUser, b: MirrorUser): boolean {
  return (
    a.externalId === b.externalId &&
    a.userName === b.userName &&
    a.displayName === b.displayName &&
    a.email === b.email &&
    a.active === b.active &&
    a.department === b.department &&
    a.manager === b.manager
  );
}

/** Whether `a` holds the names of `b`, which is sorted; the mirror stores them sorted, so `a` is compared as it is first. */
function sameNames(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((name, i) => name === b[i]) || [...a].sort().every((name, i) => name === b[i]);
}

function sameGroup(a: MirrorGroup, b: MirrorGroup): boolean {
  if (a.displayName !== b.displayName || a.members.length !== b.members.length) return false;
  const members = new Set(a.members);
  return b.members.every((member) => members.has(member));
}
