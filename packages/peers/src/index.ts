// Real protocol peers for tests: servers from Debian's packages (and smtp-server) started in
// throw-away directories, on free ports or in network namespaces of their own. See README.md.
export * from './ldif';
export { createNetworkNamespace, listPeerNamespaces, NETNS_SUBNET, type NetworkNamespace } from './netns';
export {
  createCertificateAuthority,
  type CertificateAuthority,
  type CertificateKind,
  type IssuedCertificate,
} from './tls';
export { ensureSambaTemplate, startSambaDc, type SambaDc, type SambaDcOptions, type SambaTemplate } from './samba';
export { startSlapd, type Slapd, type SlapdOptions } from './slapd';
export {
  startDovecot,
  type Dovecot,
  type DovecotOptions,
  type ListedMessage,
  type MailUser,
  type MessageFlag,
  type NewMessage,
} from './dovecot';
export { startOAuthServer, type OAuthClient, type OAuthServer, type TokenRequest } from './oauth';
export { startSmtpReceiver, type ReceivedMessage, type SmtpReceiver, type SmtpReceiverOptions } from './smtp';
