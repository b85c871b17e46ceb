// Every sheet the console opens: definition.yaml names sheet.html for each
// create and edit (the bucket claim's detail, and the disk retirement's
// create, which the Disk detail page opens for Retire and Replace), and this picks the form
// from the kind and view the console opened it with.
//
// A sheet is a dialog for the keyboard too: focus moves to its first field
// once it has rendered, Tab and Shift-Tab cycle through its controls and
// never leave it while it is open, and Escape closes it (the page under it
// then gets focus back, see openSheet in _shared.js).
import { mount, errorBox, startPage, closeSheet } from './_shared.js';
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
  focusFirstField(root);
});

document.addEventListener('keydown', (event) => {
  if (event.key === 'Escape' && !event.defaultPrevented) {
    event.preventDefault();
    closeSheet();
  } else if (event.key === 'Tab') {
    cycleFocus(event);
  }
});

const FOCUSABLE = 'a[href], button, input, select, textarea, [tabindex]';

// focusables are the controls Tab reaches, in document order.
function focusables() {
  return [...document.querySelectorAll(FOCUSABLE)].filter((el) => !el.disabled && el.tabIndex >= 0
    && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden');
}

// focusFirstField focuses the first form field (else the first control) of
// the rendered sheet, unless the operator already moved focus.
function focusFirstField(root) {
  if (document.activeElement && document.activeElement !== document.body) return;
  const controls = focusables().filter((el) => root.contains(el));
  const first = controls.find((el) => el.matches('input, select, textarea')) || controls[0];
  if (first) first.focus();
}

// cycleFocus keeps Tab inside the sheet's document: from the last control
// it goes to the first, and Shift-Tab from the first to the last.
function cycleFocus(event) {
  const controls = focusables();
  if (controls.length === 0) {
    event.preventDefault();
    return;
  }
  const first = controls[0];
  const last = controls[controls.length - 1];
  const current = document.activeElement;
  const outside = !current || current === document.body || !controls.includes(current);
  if (event.shiftKey && (outside || current === first)) {
    event.preventDefault();
    last.focus();
  } else if (!event.shiftKey && (outside || current === last)) {
    event.preventDefault();
    first.focus();
  }
}
