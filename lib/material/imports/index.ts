export { cancelImport, createImport, getImport, importEntity, listImports, retryImport, startImport } from './jobs';
export { listImportParts, signImportParts } from './multipart';
export { drainLocalImports, enqueueImport, requeueStalledImports } from './queue';
