package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Targets are the numbers to hit.
const (
	// TargetConvergeRatio bounds discovery convergence at every size, as
	// the median of its ratios to the 8-worker floor.
	TargetConvergeRatio = 1.25
	TargetWritesPerDisk = 2.0
	// TargetEditRatio bounds a pool edit's p50 and p99 against the API
	// server's own write of the same CephCluster, measured beside it.
	TargetEditRatio  = 1.25
	TargetPeakRSSMiB = 120.0
	// TargetHostileRatio bounds the plugin's peak while it refuses hostile
	// discovery reports against its resident memory just before: decoded
	// whole, each 1 MiB of empty entries cost 371 MB; streamed and capped
	// at the 4,096th entry, a few MiB each.
	TargetHostileRatio = 1.5
	// TargetScalingRatio bounds how much the cost per disk may grow from
	// the smallest to the largest inventory: linear stays near 1,
	// quadratic would grow with the size ratio (10×).
	TargetScalingRatio = 2.0
)

// Report is a whole `just bench` run.
type Report struct {
	Settings string `json:"settings"`
	// WriteLimit is the sweep that chose the write-limit floor's workers.
	WriteLimit *WriteLimit `json:"writeLimit,omitempty"`
	Scales     []Result    `json:"scales"`
}

// Row is one line of the table.
type Row struct {
	Metric, Value, Floor, Ratio, Target string
	Pass                                bool
}

// Rows judges convergence at every size, errors and writes over all of
// them, the largest scale against the other targets, and the growth from
// the smallest to the largest. Times are medians of the samples with their
// range; a ratio is the median of the samples' ratios, each to the floor
// measured just before it.
func (r Report) Rows() []Row {
	if len(r.Scales) == 0 {
		return nil
	}
	big := r.Scales[len(r.Scales)-1]
	var rows []Row
	errors, retries, writesPerDisk, samples := 0.0, 0.0, 0.0, 0
	for _, s := range r.Scales {
		rows = append(rows,
			Row{fmt.Sprintf("discovery convergence, %d disks (s)", s.Disks), s.Converge.Format("%.2f"), s.Floor.Format("%.2f"), s.FloorRatio.Format("%.2f"),
				fmt.Sprintf("≤ %.2f× floor", TargetConvergeRatio), s.FloorRatio.Median <= TargetConvergeRatio},
			Row{fmt.Sprintf("  against the write limit (%d workers)", s.LimitWorkers), "", s.Limit.Format("%.2f"), s.LimitRatio.Format("%.2f"), "", true},
			Row{"  CPU seconds against the floor's", "", "", s.CPURatio.Format("%.2f"), "", true})
		if s.Disturbed > 0 {
			rows = append(rows, Row{fmt.Sprintf("  rounds disturbed (others > %.0f%% of the machine)", 100*DisturbedShare), fmt.Sprintf("%d of %d", s.Disturbed, len(s.Samples)), "", "", "", true})
		}
		errors, retries, samples = errors+s.ReconcileErrors, retries+s.ReconcileRetries, samples+len(s.Samples)
		writesPerDisk = max(writesPerDisk, s.WritesPerDisk())
	}
	rss := float64(big.PeakRSSBytes) / (1 << 20)
	rows = append(rows, []Row{
		{fmt.Sprintf("reconcile errors + retries (%d samples)", samples), fmt.Sprintf("%.0f + %.0f", errors, retries), "", "", "0", errors == 0 && retries == 0},
		{"writes per published disk (most of any sample)", f2(writesPerDisk), "2.00", "", "≤ 2", writesPerDisk <= TargetWritesPerDisk},
		{fmt.Sprintf("writes in %.0fs idle", big.IdleSeconds), fmt.Sprint(big.IdleWrites), "", "", "0", big.IdleWrites == 0},
		{"writes after a restart", fmt.Sprint(big.RestartWrites), "", "", "0", big.RestartWrites == 0},
		editRow("p50", big.EditP50Millis, big.EditFloorP50Millis),
		editRow("p99", big.EditP99Millis, big.EditFloorP99Millis),
		{"  of it: the DiskPool write p50 / p99 (ms)", f1(big.EditPoolWriteP50Millis) + " / " + f1(big.EditPoolWriteP99Millis), "", "", "", true},
		{"fan-out of one disk: writes", describe(big.FanoutWrites), "", "", "CephCluster, disk once; pool status ≤ 2; each consumer ≤ 1 (capacity)", fanoutOK(big.FanoutWrites, big.Consumers)},
		{"fan-out of one disk: reconciles", describe(big.FanoutReconciles), "", "", "", true},
		{"peak RSS (MiB)", f1(rss), "", "", "< 120", rss < TargetPeakRSSMiB},
		{"  of it: heap etc. / binary pages (MiB)", f1(float64(big.PeakAnonBytes)/(1<<20)) + " / " + f1(float64(big.PeakFileBytes)/(1<<20)), "", "", "", true},
		{"  a restart's peak: RSS / heap etc. (MiB)", f1(float64(big.RestartPeakRSSBytes)/(1<<20)) + " / " + f1(float64(big.RestartPeakAnonBytes)/(1<<20)), "", "", "", true},
		{"  Helm helper, while installing (MiB)", f1(float64(big.HelperPeakRSSBytes) / (1 << 20)), "", "", "", true},
	}...)
	if big.HostileConfigMaps > 0 {
		ratio := float64(big.HostilePeakRSSBytes) / float64(big.HostileBeforeBytes)
		rows = append(rows, Row{fmt.Sprintf("%d hostile discovery ConfigMaps of 1 MiB: peak RSS against resident before (MiB)", big.HostileConfigMaps),
			f1(float64(big.HostilePeakRSSBytes) / (1 << 20)), f1(float64(big.HostileBeforeBytes) / (1 << 20)), f2(ratio),
			fmt.Sprintf("≤ %.2f× before", TargetHostileRatio), ratio <= TargetHostileRatio})
	}
	if len(r.Scales) > 1 {
		small := r.Scales[0]
		perDiskSmall := small.Converge.Median / float64(small.Disks)
		perDiskBig := big.Converge.Median / float64(big.Disks)
		growth := perDiskBig / perDiskSmall
		rows = append(rows, Row{fmt.Sprintf("convergence per disk, %d → %d disks", small.Disks, big.Disks),
			fmt.Sprintf("%.2fms → %.2fms", perDiskSmall*1000, perDiskBig*1000), "", f2(growth), "≤ 2× (linear)", growth <= TargetScalingRatio})
	}
	return rows
}

// editRow is a pool edit's percentile against its floor's.
func editRow(percentile string, edit, floor float64) Row {
	ratio := edit / floor
	return Row{"pool edit → CephCluster " + percentile + " (ms)", f1(edit), f1(floor), f2(ratio), fmt.Sprintf("≤ %.2f× floor", TargetEditRatio), ratio <= TargetEditRatio}
}

// fanoutOK: one disk joining one pool writes the CephCluster and the
// disk's claimedBy once each, the pool's status at most twice, and each of
// the consumers at most once: the raw capacity changed, and with it each
// one's usable capacity (status.capacity, told after the plugin's
// capacityNoticeDelay). The pool's status is written once when its
// reconcile sees the edit, the CephCluster patch and the disk's claimedBy
// together, and twice when it runs between them: which one happens is the
// scheduling of two reconcilers on a loaded machine (TestBenchmarkSmoke saw
// both in CI), not a change in what the plugin writes.
func fanoutOK(writes map[string]int, consumers int) bool {
	limits := map[string]int{"cephclusters": 1, "disks": 1, "diskpools": 2}
	ofConsumers := 0
	for k, v := range writes {
		_, resource, _ := strings.Cut(k, " ")
		switch kind, sub, _ := strings.Cut(resource, "/"); {
		case limits[kind] > 0:
			if v > limits[kind] {
				return false
			}
		case consumerResources[kind] && sub == "status":
			ofConsumers += v
		default:
			return false
		}
	}
	return ofConsumers <= consumers
}

// consumerResources are the consumer kinds' resources.
var consumerResources = map[string]bool{"blockstorages": true, "filestorages": true, "objectstorages": true}

// Pass is whether every row passes.
func (r Report) Pass() bool {
	for _, row := range r.Rows() {
		if !row.Pass {
			return false
		}
	}
	return true
}

// WriteTable prints the verdict table, the per-scale table, every
// sample, and the write-limit sweep.
func (r Report) WriteTable(w io.Writer) {
	fmt.Fprintln(w, r.Settings)
	fmt.Fprintln(w, "Times: median (min–max) of the samples; ratios: median (min–max) of each sample's ratio to the floor measured just before it.")
	fmt.Fprintln(w, "CPU: seconds the API server, etcd, the plugin and the benchmark used; OTHERS: the share of the machine's cores other processes used meanwhile.")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "METRIC\tVALUE\tFLOOR\tRATIO\tTARGET\tPASS")
	for _, row := range r.Rows() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", row.Metric, row.Value, row.Floor, row.Ratio, row.Target, map[bool]string{true: "yes", false: "NO"}[row.Pass])
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DISKS\tCONVERGE (s)\tFLOOR (s)\tRATIO\tWRITE LIMIT (s)\tRATIO\tCPU RATIO\tDISTURBED\tWRITES/DISK\tERRORS\tRETRIES\tIDLE W\tRESTART W\tEDIT p50/p99 (ms)\tEDIT FLOOR p50/p99\tPEAK RSS (MiB)")
	for _, s := range r.Scales {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%.2f\t%.0f\t%.0f\t%d\t%d\t%.0f/%.0f\t%.0f/%.0f\t%.1f\n", s.Disks,
			s.Converge.Format("%.2f"), s.Floor.Format("%.2f"), s.FloorRatio.Format("%.2f"), s.Limit.Format("%.2f"), s.LimitRatio.Format("%.2f"),
			s.CPURatio.Format("%.2f"), s.Disturbed, len(s.Samples),
			s.WritesPerDisk(), s.ReconcileErrors, s.ReconcileRetries, s.IdleWrites, s.RestartWrites,
			s.EditP50Millis, s.EditP99Millis, s.EditFloorP50Millis, s.EditFloorP99Millis, float64(s.PeakRSSBytes)/(1<<20))
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DISKS\tSAMPLE\tFLOOR (s)\tWRITE LIMIT (s)\tPLUGIN (s)\tRATIO\tFIRST DISK (s)\tCONFIGMAPS (s)\tCPU FLOOR/PLUGIN (s)\tOTHERS FLOOR/PLUGIN")
	for _, s := range r.Scales {
		for i, x := range s.Samples {
			fmt.Fprintf(tw, "%d\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.1f/%.1f\t%.0f%%/%.0f%%\n", s.Disks, i+1, x.FloorSeconds, x.LimitSeconds, x.ConvergeSeconds,
				x.ConvergeSeconds/x.FloorSeconds, x.FirstDiskSeconds, x.ConfigMapsSeconds, x.FloorCPU.Ours(), x.ConvergeCPU.Ours(),
				100*x.FloorCPU.OthersShare(x.FloorSeconds), 100*x.ConvergeCPU.OthersShare(x.ConvergeSeconds))
		}
	}
	tw.Flush()
	if r.WriteLimit != nil {
		fmt.Fprintf(w, "\nwrite limit (Disk creates + status writes a second, by workers): %s\n", r.WriteLimit)
	}
}

// Save writes results.json, results.txt and chart.png into dir.
func (r Report) Save(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), data, 0o644); err != nil {
		return err
	}
	var table strings.Builder
	r.WriteTable(&table)
	if err := os.WriteFile(filepath.Join(dir, "results.txt"), []byte(table.String()), 0o644); err != nil {
		return err
	}
	return r.chart(filepath.Join(dir, "chart.png"))
}

// chart plots convergence time (plugin and both floors: medians, with the
// samples' range) and writes per disk against inventory size.
func (r Report) chart(path string) error {
	var converge, floor, limit spreadPoints
	writes := plotter.XYs{}
	for _, s := range r.Scales {
		converge = append(converge, spreadPoint{float64(s.Disks), s.Converge})
		floor = append(floor, spreadPoint{float64(s.Disks), s.Floor})
		limit = append(limit, spreadPoint{float64(s.Disks), s.Limit})
		writes = append(writes, plotter.XY{X: float64(s.Disks), Y: s.WritesPerDisk()})
	}
	left := plot.New()
	left.Title.Text = "Discovery convergence (median, range)"
	left.X.Label.Text = "disks"
	left.Y.Label.Text = "seconds"
	if err := plotutil.AddLinePoints(left, "ceph-rook", plotter.XYer(converge), "floor (plain client, 8 workers)", plotter.XYer(floor),
		"write limit (plain client, most workers)", plotter.XYer(limit)); err != nil {
		return err
	}
	if err := plotutil.AddYErrorBars(left, converge, floor, limit); err != nil {
		return err
	}
	left.Legend.Top = true
	right := plot.New()
	right.Title.Text = "Writes per published disk"
	right.X.Label.Text = "disks"
	right.Y.Label.Text = "writes"
	right.Y.Min, right.Y.Max = 0, 3
	if err := plotutil.AddLinePoints(right, "ceph-rook", writes); err != nil {
		return err
	}
	limitLine := plotter.NewFunction(func(float64) float64 { return TargetWritesPerDisk })
	limitLine.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
	right.Add(limitLine)
	right.Legend.Add("target", limitLine)
	right.Legend.Top = true

	img := vgimg.New(12*vg.Inch, 4.5*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Inch / 3, PadTop: vg.Inch / 6, PadBottom: vg.Inch / 6, PadLeft: vg.Inch / 6, PadRight: vg.Inch / 6}
	canvases := plot.Align([][]*plot.Plot{{left, right}}, tiles, dc)
	left.Draw(canvases[0][0])
	right.Draw(canvases[0][1])
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = vgimg.PngCanvas{Canvas: img}.WriteTo(f)
	return err
}

// spreadPoints plot medians with their range as error bars.
type spreadPoint struct {
	x float64
	s Spread
}

type spreadPoints []spreadPoint

func (p spreadPoints) Len() int                    { return len(p) }
func (p spreadPoints) XY(i int) (float64, float64) { return p[i].x, p[i].s.Median }
func (p spreadPoints) YError(i int) (float64, float64) {
	return p[i].s.Median - p[i].s.Min, p[i].s.Max - p[i].s.Median
}

func f1(v float64) string { return fmt.Sprintf("%.1f", v) }
func f2(v float64) string { return fmt.Sprintf("%.2f", v) }
