export { identityService } from './main';
