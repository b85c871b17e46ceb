package devconsole_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fundament-oss/ceph-rook/api/v1alpha1"
	"github.com/fundament-oss/ceph-rook/internal/browser"
)

// BenchmarkConsoleAtScale is the console's browser benchmark (issue 20;
// `just bench-console`): the dev console under the production CSP, headless
// Chromium, 1,000 and then 10,000 Disks (20 to a node) on the real API
// server. Per size it reports, as medians of consoleBenchSamples:
//
//   - floor-ms: fetching every page of the Disk list (limit 500) through
//     the same kube-api proxy, from the same page, with no rendering;
//   - first-rows-ms and complete-ms: from the Disks page's first list
//     request (Resource Timing) to its performance marks
//     ceph-rook:disks:first-rows and ceph-rook:disks:complete;
//   - complete/floor: the ratio the target is set on (2x at 10,000);
//   - filter-ms: in the DiskPool sheet's picker, from typing into the
//     search to the filtered list painted (the next animation frame);
//   - select-ms: from "select every pickable disk the filter shows", the
//     filter being the SSDs on 50 nodes, to the summary painted.
//
// It is a benchmark, not a test: nothing is asserted about times. Run it
// alone: it adds 10,000 Disks to the package's API server.
func BenchmarkConsoleAtScale(b *testing.B) {
	ctx := context.Background()
	srv := startConsole(b, &proxyLog{})
	for _, disks := range []int{1000, 10000} {
		ensureBenchDisks(b, ctx, disks)
		b.Run(fmt.Sprintf("disks=%d", disks), func(b *testing.B) {
			br := browser.Start(b, srv.URL())
			var floor, firstRows, complete, filter, selectAll []float64
			for range b.N {
				for range consoleBenchSamples {
					f, c := disksPage(b, br)
					floor = append(floor, fetchFloor(b, br))
					firstRows, complete = append(firstRows, f), append(complete, c)
					fl, sel := pickerTimes(b, br)
					filter, selectAll = append(filter, fl), append(selectAll, sel)
				}
			}
			if disks == 10000 && os.Getenv("CONSOLE_BENCH_SCREENSHOTS") != "" {
				br.Open("/view/disks.ceph.fundament.io")
				waitLoaded(b, br, browser.PageFrame)
				br.Screenshot("bench-disks-10000")
				openPicker(b, br)
				br.Screenshot("bench-picker-10000")
			}
			b.ReportMetric(median(floor), "floor-ms")
			b.ReportMetric(median(firstRows), "first-rows-ms")
			b.ReportMetric(median(complete), "complete-ms")
			b.ReportMetric(median(complete)/median(floor), "complete/floor")
			b.ReportMetric(median(filter), "filter-ms")
			b.ReportMetric(median(selectAll), "select-ms")
			b.Logf("samples (ms): floor %v, first rows %v, complete %v, filter %v, select %v", floor, firstRows, complete, filter, selectAll)
		})
	}
}

// consoleBenchSamples is how many times each figure is measured per size.
const consoleBenchSamples = 3

// ensureBenchDisks creates Disks until there are n: 20 to a node, the
// benchmark's mix of HDD, SSD and NVMe, every seventh in use and every
// tenth held by a pool, as discovery and the plugin would write them.
func ensureBenchDisks(b *testing.B, ctx context.Context, n int) {
	b.Helper()
	var have v1alpha1.DiskList
	c := controlPlane.Env(b).Client
	require.NoError(b, c.List(ctx, &have, client.MatchingLabels{benchLabel: "true"}))
	work := make(chan int)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for i := range work {
				if err := createWithStatusErr(ctx, c, benchDisk(i)); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := len(have.Items); i < n; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		require.NoError(b, err)
	default:
	}
	waitServing(b, ctx)
}

// waitServing waits until the API server serves lists of the kinds the
// measured pages read: just after their CRDs are installed it answers
// "storage is (re)initializing" (429) while its watch cache fills, and a
// page that lists once would show that instead of being measured.
func waitServing(b *testing.B, ctx context.Context) {
	b.Helper()
	lists := []client.ObjectList{&v1alpha1.DiskList{}, &v1alpha1.DiskPoolList{}, &v1alpha1.BlockStorageList{}, &v1alpha1.FileStorageList{}, &v1alpha1.ObjectStorageList{}}
	deadline := time.Now().Add(time.Minute)
	for _, list := range lists {
		for {
			err := controlPlane.Env(b).Client.List(ctx, list, client.Limit(1))
			if err == nil {
				break
			}
			require.True(b, time.Now().Before(deadline), "the API server does not serve %T: %v", list, err)
			time.Sleep(200 * time.Millisecond)
		}
	}
}

const benchLabel = "bench.ceph.fundament.io/console"

var benchTypes = []struct {
	typ           v1alpha1.DiskType
	path          string
	size, display string
	model         string
}{
	{v1alpha1.DiskTypeHDD, "/dev/sd", "4000787030016", "3.6 TiB", "ST4000NM0035"},
	{v1alpha1.DiskTypeSSD, "/dev/sd", "1000204886016", "931.5 GiB", "Samsung SSD 870"},
	{v1alpha1.DiskTypeNVMe, "/dev/nvme", "2000398934016", "1.8 TiB", "Samsung SSD 980 PRO"},
}

func benchDisk(i int) *v1alpha1.Disk {
	node, dev := i/20, i%20
	kind := benchTypes[dev%len(benchTypes)]
	size := resource.MustParse(kind.size)
	path := fmt.Sprintf("%s%c", kind.path, 'a'+dev)
	if kind.typ == v1alpha1.DiskTypeNVMe {
		path = fmt.Sprintf("/dev/nvme%dn1", dev)
	}
	state := v1alpha1.DiskAvailable
	if i%7 == 0 {
		state = v1alpha1.DiskInUse
	}
	d := &v1alpha1.Disk{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-%04d-%02d", node, dev), Labels: map[string]string{benchLabel: "true"}},
		Status: v1alpha1.DiskStatus{
			NodeName: fmt.Sprintf("node-%04d", node), Path: path,
			StablePath: fmt.Sprintf("/dev/disk/by-id/wwn-0x5000c500%08x", i),
			Size:       &size, DisplaySize: kind.display, Type: kind.typ, Rotational: kind.typ == v1alpha1.DiskTypeHDD,
			Model: kind.model, Serial: fmt.Sprintf("S%08d", i), WWN: fmt.Sprintf("0x5000c500%08x", i),
			Available: state == v1alpha1.DiskAvailable, State: state,
		},
	}
	if i%10 == 3 {
		d.Status.ClaimedBy = fmt.Sprintf("bench-pool-%d", node%5)
	}
	return d
}

// disksPage loads the Disks page and returns the times from its first list
// request to its first rows and to complete, in ms.
func disksPage(b *testing.B, br *browser.Browser) (firstRows, complete float64) {
	b.Helper()
	br.Open("/view/disks.ceph.fundament.io")
	waitLoaded(b, br, browser.PageFrame)
	res, _, err := br.Call(browser.PageFrame, "html", `function() {
		const mark = (name) => performance.getEntriesByName(name)[0].startTime;
		const lists = performance.getEntriesByType('resource').filter((e) => e.name.includes('/disks'));
		const start = Math.min(...lists.map((e) => e.startTime));
		return [mark('ceph-rook:disks:first-rows') - start, mark('ceph-rook:disks:complete') - start];
	}`)
	require.NoError(b, err)
	var times [2]float64
	require.NoError(b, json.Unmarshal(res, &times))
	return times[0], times[1]
}

// waitLoaded waits, inside the page (no polling of the DOM from here: at
// 10,000 rows that would load the page under test), until the Disks page
// says it is complete.
func waitLoaded(b *testing.B, br *browser.Browser, frame string) {
	b.Helper()
	var err error
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		var found bool
		_, found, err = br.Call(frame, "#app", `function() {
			return new Promise((resolve, reject) => {
				const until = Date.now() + 120000;
				const check = () => {
					if (this.dataset.loaded === 'complete') resolve(true);
					else if (Date.now() > until) reject(new Error('not complete after 120 s'));
					else setTimeout(check, 20);
				};
				check();
			});
		}`)
		if found && err == nil {
			return
		}
	}
	require.NoError(b, err, "the Disks page never said it was complete")
	b.Fatal("the Disks page never appeared")
}

// fetchFloor fetches every page of the Disk list through the page's own
// proxy and SDK, parsing each as the page must, and rendering nothing.
func fetchFloor(b *testing.B, br *browser.Browser) float64 {
	b.Helper()
	res, _, err := br.Call(browser.PageFrame, "html", `async function() {
		const ctx = await window.fundament.init;
		const base = ctx.kubeApiProxyUrl + '/clusters/' + ctx.clusterId + '/apis/ceph.fundament.io/v1alpha1/disks?limit=500';
		const t0 = performance.now();
		let next = '';
		let items = 0;
		do {
			const resp = await window.fundament.fetch(base + (next ? '&continue=' + encodeURIComponent(next) : ''));
			const list = await resp.json();
			items += list.items.length;
			next = list.metadata.continue || '';
		} while (next);
		return [performance.now() - t0, items];
	}`)
	require.NoError(b, err)
	var out [2]float64
	require.NoError(b, json.Unmarshal(res, &out))
	return out[0]
}

// openPicker opens the DiskPool create sheet and waits until its picker
// has every node.
func openPicker(b *testing.B, br *browser.Browser) {
	b.Helper()
	br.Open("/view/diskpools.ceph.fundament.io")
	br.Click(browser.PageFrame, `[data-action="create"]`)
	br.WaitForWithin(2*time.Minute, browser.SheetFrame, `[data-role="disk-picker"] select[name="disk-node"]`,
		`function() { return this.options.length >= 50; }`)
	_, _, err := br.Call(browser.SheetFrame, `[data-role="disk-picker"]`, `function() {
		return new Promise((resolve) => {
			const check = () => (this.dataset.loaded === 'complete' || this.closest('#app').dataset.loaded === 'complete') ? resolve(true) : setTimeout(check, 20);
			check();
		});
	}`)
	require.NoError(b, err)
}

// pickerTimes measures, in the picker, a search typed and the selection of
// every available SSD on 50 nodes, each until painted, in ms.
func pickerTimes(b *testing.B, br *browser.Browser) (filter, selectAll float64) {
	b.Helper()
	openPicker(b, br)
	res, _, err := br.Call(browser.SheetFrame, `[data-role="disk-picker"]`, `async function() {
		const picker = this;
		const painted = () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
		const changed = (key, before) => new Promise((resolve) => {
			const check = () => (Number(picker.dataset[key] || 0) !== before ? resolve() : requestAnimationFrame(check));
			check();
		});
		const set = async (el, value, event) => {
			const before = Number(picker.dataset.filterGeneration || 0);
			if (el.multiple) [...el.options].forEach((o, i) => { o.selected = value(i); });
			else el.value = value;
			el.dispatchEvent(new Event(event, { bubbles: true }));
			await changed('filterGeneration', before);
		};
		const search = picker.querySelector('input[name="disk-search"]');
		let before = Number(picker.dataset.filterGeneration || 0);
		let t0 = performance.now();
		search.value = 'node-0042';
		search.dispatchEvent(new Event('input', { bubbles: true }));
		await changed('filterGeneration', before);
		await painted();
		const filter = performance.now() - t0;
		await set(search, '', 'input');

		await set(picker.querySelector('select[name="disk-node"]'), (i) => i < 50, 'change');
		await set(picker.querySelector('select[name="disk-type"]'), 'SSD', 'change');
		await set(picker.querySelector('select[name="disk-state"]'), 'Available', 'change');
		before = Number(picker.dataset.selectionGeneration || 0);
		t0 = performance.now();
		picker.querySelector('button[name="select-filtered"]').click();
		await changed('selectionGeneration', before);
		await painted();
		return [filter, performance.now() - t0];
	}`)
	require.NoError(b, err)
	var out [2]float64
	require.NoError(b, json.Unmarshal(res, &out))
	return out[0], out[1]
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}
