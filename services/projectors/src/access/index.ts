export * from './acl-refresh.js';
export * from './channel-access.js';
export * from './membership.js';
