import { AppError } from '@msp/http';
import { isDeskError, type DeskClient, type DeskUser } from '../desk/desk-client';

/**
 * The desk user if desk knows them as active in the caller's tenant, else null. Asked with link's
 * own credential for the caller's tenant. When desk cannot answer (down, or link's credential is
 * missing or refused) the request cannot be checked: 503, and nothing is created.
 */
export async function activeDeskUser(desk: DeskClient, tenantId: string, userId: string): Promise<DeskUser | null> {
  try {
    const user = await desk.getUser(tenantId, userId);
    return user && user.active ? user : null;
  } catch (error) {
    if (!isDeskError(error)) throw error;
    throw new AppError(503, `The helpdesk could not be asked about user ${userId}: ${error.message}`, {
      code: 'desk-unavailable',
      title: 'Helpdesk unavailable',
      headers: error.retryable ? { 'Retry-After': '30' } : {},
      cause: error,
    });
  }
}
