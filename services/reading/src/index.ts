export { readingService } from './main';
