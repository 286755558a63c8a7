export * from './users';
export * from './organizations';
export * from './platform';
export * from './cases';
export * from './billing';
export * from './material';
export * from './idempotency';
export * from './relations';
