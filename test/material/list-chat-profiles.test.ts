import { routes } from '../../functions/routes';
import { describeProfileList } from '../harness/profile-lists';

describeProfileList(routes.listChatProfiles, {
  platform: 'chat_platform',
  other: 'professional_network',
  names: { first: 'ann#1', second: 'bob#2' },
});
