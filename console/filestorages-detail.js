// FileStorage detail page.
import { consumerDetailPage } from './consumer-pages.js';

consumerDetailPage('FileStorage');
