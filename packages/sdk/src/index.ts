// @msp/sdk: typed clients for desk, link and hr, generated from the OpenAPI documents they serve
// (src/generated, made by `pnpm generate`). See docs/sdk.md.
export {
  createDeskClient,
  createHrClient,
  createLinkClient,
  type ClientOptions,
  type DeskClient,
  type HrClient,
  type LinkClient,
  type TokenSource,
} from './clients';
export { clientCredentials, requestToken, type ClientCredentialsOptions, type TokenResponse } from './token';
export { nextPage, pages, type PageCursor } from './pages';
export { isProblem, ProblemError, type Problem } from './problem';

/** Every type of a service's document: `Desk.components['schemas']['Ticket']`, `Desk.paths['/tickets']`, `Desk.webhooks`. */
export type * as Desk from './generated/desk';
export type * as Link from './generated/link';
export type * as Hr from './generated/hr';
