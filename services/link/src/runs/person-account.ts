import type { Directory } from './directory';
import type { TenantRecord } from '../tenants/tenants.repository';
import type { RunFindings, RunKindDeps } from './run-kind';
import { problem, probe, type StepProblem } from './run-preview';
import { TaskFailure } from './run-tasks';

/** A run about someone who already has a directory account: found by their desk e-mail. */
export interface PersonRun {
  id: string;
  ownerTenantId: string;
  email: string;
  managedTenantId: string | null;
  directoryUserId: string | null;
}

export const domainOf = (email: string) => email.slice(email.lastIndexOf('@') + 1);

/**
 * How offboarding and moves find the person: the desk user's e-mail → the managed tenant of its
 * domain → the directory account whose userName is that e-mail. What is found is remembered on
 * the run (`save`), so a later step or a retry asks again only for what is still unknown.
 */
export function personAccount(
  deps: Pick<RunKindDeps, 'tenants' | 'directories'> & { save(runId: string, fields: RunFindings): Promise<void> },
) {
  const { tenants, directories, save } = deps;

  /** `dryRun`: what is found is not remembered on the run (a dry run writes nothing). */
  async function tenantOf(run: PersonRun, options: { dryRun?: boolean } = {}): Promise<TenantRecord> {
    const domain = domainOf(run.email);
    const tenant = run.managedTenantId
      ? await tenants.findById(run.ownerTenantId, run.managedTenantId)
      : await tenants.findByDomain(run.ownerTenantId, domain);
    if (!tenant)
      throw new TaskFailure(
        `None of your managed tenants has the domain ${domain}, so the directory account of ${run.email} cannot be reached.`,
      );
    if (!run.managedTenantId && !options.dryRun) {
      await save(run.id, { managedTenantId: tenant.id });
      run.managedTenantId = tenant.id;
    }
    return tenant;
  }

  async function directoryAccount(
    run: PersonRun,
    options: { dryRun?: boolean } = {},
  ): Promise<{ directory: Directory; userId: string; tenant: TenantRecord }> {
    const tenant = await tenantOf(run, options);
    const directory = await directories.open(tenant.id);
    if (run.directoryUserId) return { directory, userId: run.directoryUserId, tenant };
    const account = await directory.findUserByUserName(run.email);
    if (!account) throw new TaskFailure(`The directory of ${tenant.domain} has no account with userName ${run.email}.`);
    if (options.dryRun) return { directory, userId: account.id, tenant };
    await save(run.id, { directoryUserId: account.id });
    run.directoryUserId = account.id;
    return { directory, userId: account.id, tenant };
  }

  /** A dry run's lookup of the account: found (with its directory), or null with the problem in `problems`. */
  async function previewAccount(
    run: PersonRun,
    problems: StepProblem[],
  ): Promise<{ directory: Directory; userId: string; tenant: TenantRecord } | null> {
    const tenant = await probe(problems, 'tenant_missing', () => tenantOf(run, { dryRun: true }));
    if (!tenant) return null;
    const directory = await probe(problems, 'directory_unreachable', () => directories.open(tenant.id));
    if (!directory) return null;
    const account = await probe(problems, 'account_not_found', () => directory.findUserByUserName(run.email));
    if (account) return { directory, userId: account.id, tenant };
    if (!problems.length)
      problems.push(
        problem('account_not_found', `The directory of ${tenant.domain} has no account with userName ${run.email}.`),
      );
    return null;
  }

  return { tenantOf, directoryAccount, previewAccount };
}
