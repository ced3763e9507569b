export { boot, Config, type Started } from './boot';
