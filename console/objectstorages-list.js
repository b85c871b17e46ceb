// ObjectStorage list page.
import { consumerListPage } from './consumer-pages.js';

consumerListPage('ObjectStorage');
