import { buildApp } from './build-app';

// `npx cdk synth|diff|deploy -c environment=dev|staging|prod` (cdk.json: app and default context).
buildApp();
