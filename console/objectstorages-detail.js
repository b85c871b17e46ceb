// ObjectStorage detail page, with the Buckets section for its claims.
import { consumerDetailPage } from './consumer-pages.js';
import { bucketsSection } from './bucket-pages.js';

consumerDetailPage('ObjectStorage', bucketsSection);
