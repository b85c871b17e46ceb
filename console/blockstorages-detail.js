// BlockStorage detail page.
import { consumerDetailPage } from './consumer-pages.js';

consumerDetailPage('BlockStorage');
