// BlockStorage list page.
import { consumerListPage } from './consumer-pages.js';

consumerListPage('BlockStorage');
