/**
 * What onboarding and offboarding need from a managed tenant's directory, whatever speaks to it
 * (the SCIM connector). Kept this narrow so the runs do not depend on how connectors store their
 * configuration or talk SCIM.
 */
export interface DirectoryUserInput {
  userName: string;
  givenName: string;
  familyName: string;
  email: string;
  department: string;
  /** false: a staged account, made ahead of the start date and activated on it (default true). */
  active?: boolean;
  /** The job title (SCIM and LDAP `title`). */
  title?: string;
  /**
   * The userName (e-mail) of the person's manager: LDAP sets `manager` to that account's DN when
   * the directory has it (and leaves it unset when not).
   */
  managerUserName?: string;
}

/** What a leaver's disabling did beyond the flag (LDAP): the groups left and where the entry went, so a person or a retry can restore them. */
export interface DisableOutcome {
  removedGroups?: string[];
  movedTo?: string;
}

export interface Directory {
  /**
   * SCIM POST /Users; answers the directory's id. A directory where link sets the first password
   * (LDAP) also answers the account's own user name and that password, sealed (never in clear
   * outside the directory client).
   */
  createUser(
    user: DirectoryUserInput,
  ): Promise<{ id: string; userName?: string; initialPasswordSealed?: string; managerSet?: boolean }>;
  /** The user whose userName is exactly this, or null. */
  findUserByUserName(userName: string): Promise<{ id: string; active: boolean } | null>;
  /** The group of exactly this displayName, or null. */
  findGroupByDisplayName(displayName: string): Promise<{ id: string } | null>;
  /** SCIM PATCH of the group: add the user as a member. */
  addGroupMember(groupId: string, userId: string): Promise<void>;
  /**
   * SCIM PATCH of the user: active false. LDAP also removes the user from its groups, moves it to
   * disabled_ou when there is one and notes `note` in its description.
   */
  deactivateUser(userId: string, options?: { note?: string }): Promise<void | DisableOutcome>;
  /** SCIM PATCH of the user: active true. */
  activateUser(userId: string): Promise<void>;
  /** SCIM DELETE /Users/:id; false when the directory no longer had it. */
  deleteUser(userId: string): Promise<boolean>;
  /** SCIM PATCH of the user: title, department and manager (the manager's directory id); only those given. */
  updateUserProfile(
    userId: string,
    profile: { title?: string; department?: string; managerId?: string },
  ): Promise<void>;
  /** SCIM PATCH of the group: remove the user from its members. */
  removeGroupMember(groupId: string, userId: string): Promise<void>;
  /**
   * For dry runs, where a directory can name more than a user name (LDAP: DNs); reads only.
   * Absent: the plans name users and groups by name.
   */
  describe?: DirectoryDescription;
}

export interface DirectoryDescription {
  /** Where the directory lives, in words (`corp.example`, from the base DN). */
  where: string;
  /** The entry a joiner would get (`CN=Ada Lovelace,OU=Staff,DC=corp,DC=example`). */
  newUserName(user: DirectoryUserInput): Promise<string>;
  /** The entry of an existing user (by directory id). */
  userName(userId: string): Promise<string | null>;
  /** The group a bundle names (its DN), or null when there is none. */
  groupName(bundle: string): Promise<string | null>;
  /** Why the directory would refuse the initial password link sets, or null. */
  passwordProblem(): Promise<string | null>;
  /** Where a department moves its members (`department_ous`), if anywhere. */
  departmentOu(department: string): string | null;
}

export interface Directories {
  /** Whether the managed tenant has a connector link may use (enabled). */
  hasEnabledConnector(managedTenantId: string): Promise<boolean>;
  /** The directory of the managed tenant's enabled connector; a TaskFailure when there is none. */
  open(managedTenantId: string): Promise<Directory>;
  /** Whether a directory error may pass by itself (network, timeout, 429, 5xx). */
  isRetryable(error: unknown): boolean;
  /**
   * The name of a directory's failure where it has one a person acts on (LDAP: `password_policy`,
   * `account_exists`, `ou_missing`, `insufficient_access`, `directory_unreachable`, …), else null.
   */
  failureName?(error: unknown): string | null;
}
