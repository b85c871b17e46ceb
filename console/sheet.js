// Every sheet the console opens: definition.yaml names sheet.html for each
// create and edit (the bucket claim's detail, and the disk retirement's
// create, which the Disk detail page opens for Retire and Replace), and this picks the form
// from the kind and view the console opened it with.
import { mount, errorBox, startPage } from './_shared.js';
import { consumerForm } from './consumer-pages.js';
import { diskPoolForm } from './diskpool-forms.js';
import { bucketCreateForm, bucketDetail } from './bucket-pages.js';
import { retireSheet } from './retirement-pages.js';

const SHEETS = {
  DiskPool: { create: diskPoolForm, edit: diskPoolForm },
  DiskRetirement: { create: retireSheet },
  BlockStorage: { create: consumerForm, edit: consumerForm },
  FileStorage: { create: consumerForm, edit: consumerForm },
  ObjectStorage: { create: consumerForm, edit: consumerForm },
  ObjectBucketClaim: { create: bucketCreateForm, detail: bucketDetail },
};

// A form renders once: reloading it when a write elsewhere succeeds would
// throw away what the operator typed.
let rendered = false;

startPage(async (root, ctx) => {
  if (rendered) return;
  rendered = true;
  const render = SHEETS[ctx.crdKind] && SHEETS[ctx.crdKind][ctx.view];
  if (!render) {
    mount(root, errorBox(`There is no ${ctx.view} sheet for ${ctx.crdKind}.`));
    return;
  }
  await render(root, ctx);
});
