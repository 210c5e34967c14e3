import type { Client } from 'ldapts';

/**
 * One sync's knowledge of which user DN is which id, so that managers and group members (named by
 * DN) cost no reads of their own when the users' listing already holds them. DNs are compared
 * lowercased: AD answers a DN in the case it was written, a reference may use another.
 */
export interface UserIds {
  /** Notes the id of a user the listing returned. */
  listed(dn: string, id: string): void;
  /** Whether a DN's id is known (listed, or read), or known to be no user (null). */
  knows(dn: string): boolean;
  /** The id of a DN, or undefined when it is not known (or not a user). */
  idOf(dn: string): string | undefined;
  /** Reads the ids of these DNs by a base read each (those not known yet, each once); a DN that names no entry is no user. */
  readMissing(client: Client, dns: Iterable<string>): Promise<void>;
  /**
   * A full listing of users_ou began: group members wait for its end rather than read users_ou again.
   * The listing calls the returned function when it ends, completed or not.
   */
  fullListingStarted(): (completed: boolean) => void;
  /**
   * users_ou's user DNs → ids: those of the full listing of this sync when there is one (waited
   * for), else one subtree read of the ids alone (`readAll`), made once.
   */
  usersOuIds(readAll: () => Promise<Map<string, string>>): Promise<Map<string, string>>;
}

export function createUserIds(readId: (client: Client, dn: string) => Promise<string | null>): UserIds {
  /** Listed users, by lowercased DN: exactly the users of users_ou when the listing was full. */
  const listed = new Map<string, string>();
  /** DNs read for a manager (null: no entry); group members are taken from `listed` alone. */
  const read = new Map<string, string | null>();
  let fullListing: Promise<boolean> | undefined;
  let usersOu: Promise<Map<string, string>> | undefined;
  const knows = (dn: string) => listed.has(dn.toLowerCase()) || read.has(dn.toLowerCase());

  return {
    listed(dn, id) {
      listed.set(dn.toLowerCase(), id);
    },
    knows,
    idOf(dn) {
      const key = dn.toLowerCase();
      return listed.get(key) ?? read.get(key) ?? undefined;
    },
    async readMissing(client, dns) {
      for (const dn of dns) {
        if (knows(dn)) continue;
        read.set(dn.toLowerCase(), await readId(client, dn));
      }
    },
    fullListingStarted() {
      let end!: (completed: boolean) => void;
      fullListing = new Promise((resolve) => (end = resolve));
      return end;
    },
    usersOuIds(readAll) {
      usersOu ??= (async () => ((await fullListing) ? listed : readAll()))();
      return usersOu;
    },
  };
}
