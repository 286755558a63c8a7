export { cancelImport, createImport, getImport, importEntity, listImports, retryImport, startImport } from './jobs';
export { drainLocalImports, enqueueImport, requeueStalledImports } from './queue';
