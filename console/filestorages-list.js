// FileStorage list page.
import { consumerListPage } from './consumer-pages.js';

consumerListPage('FileStorage');
