export * from './users';
export * from './organizations';
export * from './platform';
export * from './relations';
