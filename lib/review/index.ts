export * from './tags';
