/** The authenticated caller, as established by @msp/auth from a verified access token. */
export interface Principal {
  /** The API client the token was issued to (`sub`). */
  clientId: string;
  tenantId: string;
  scopes: string[];
  /**
   * A service client's token (claim `client_kind: "service"`): a client of no tenant that
   * acts for others, the only caller whose `X-On-Behalf-Of` is recorded.
   */
  serviceClient: boolean;
  tokenId: string;
  expiresAt: number;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      requestId: string;
      principal?: Principal;
      /** Why the presented token was rejected, kept until a route actually needs a caller. */
      authFailure?: { error: string; description: string };
    }
  }
}

export {};
