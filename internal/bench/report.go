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
	TargetConvergeRatio = 1.5
	TargetWritesPerDisk = 2.0
	TargetEditP99Millis = 250.0
	TargetPeakRSSMiB    = 120.0
	// TargetScalingRatio bounds how much the cost per disk may grow from
	// the smallest to the largest inventory: linear stays near 1,
	// quadratic would grow with the size ratio (10×).
	TargetScalingRatio = 2.0
)

// Report is a whole `just bench` run.
type Report struct {
	Settings string   `json:"settings"`
	Scales   []Result `json:"scales"`
}

// Row is one line of the table.
type Row struct {
	Metric, Value, Floor, Ratio, Target string
	Pass                                bool
}

// Rows judges the largest scale against the targets, and the growth from
// the smallest to the largest.
func (r Report) Rows() []Row {
	if len(r.Scales) == 0 {
		return nil
	}
	big := r.Scales[len(r.Scales)-1]
	ratio := big.ConvergeSeconds / big.FloorSeconds
	rss := float64(big.PeakRSSBytes) / (1 << 20)
	rows := []Row{
		{"discovery convergence (s)", f1(big.ConvergeSeconds), f1(big.FloorSeconds), f2(ratio), "≤ 1.5× floor", ratio <= TargetConvergeRatio},
		{"reconcile errors + retries", fmt.Sprintf("%.0f + %.0f", big.ReconcileErrors, big.ReconcileRetries), "", "", "0", big.ReconcileErrors == 0 && big.ReconcileRetries == 0},
		{"writes per published disk", f2(big.WritesPerDisk()), "2.00", "", "≤ 2", big.WritesPerDisk() <= TargetWritesPerDisk},
		{fmt.Sprintf("writes in %.0fs idle", big.IdleSeconds), fmt.Sprint(big.IdleWrites), "", "", "0", big.IdleWrites == 0},
		{"writes after a restart", fmt.Sprint(big.RestartWrites), "", "", "0", big.RestartWrites == 0},
		{"pool edit → CephCluster p50 (ms)", f1(big.EditP50Millis), f1(big.EditFloorP50Millis), f2(big.EditP50Millis / big.EditFloorP50Millis), "", true},
		{"pool edit → CephCluster p99 (ms)", f1(big.EditP99Millis), f1(big.EditFloorP99Millis), f2(big.EditP99Millis / big.EditFloorP99Millis), "< 250", big.EditP99Millis < TargetEditP99Millis},
		{"fan-out of one disk: writes", describe(big.FanoutWrites), "", "", "CephCluster, pool status, disk; no consumer", fanoutOK(big.FanoutWrites)},
		{"fan-out of one disk: reconciles", describe(big.FanoutReconciles), "", "", "", true},
		{"peak RSS (MiB)", f1(rss), "", "", "< 120", rss < TargetPeakRSSMiB},
		{"  of it: heap etc. / binary pages (MiB)", f1(float64(big.PeakAnonBytes)/(1<<20)) + " / " + f1(float64(big.PeakFileBytes)/(1<<20)), "", "", "", true},
		{"  Helm helper, while installing (MiB)", f1(float64(big.HelperPeakRSSBytes) / (1 << 20)), "", "", "", true},
	}
	if len(r.Scales) > 1 {
		small := r.Scales[0]
		perDiskSmall := small.ConvergeSeconds / float64(small.Disks)
		perDiskBig := big.ConvergeSeconds / float64(big.Disks)
		growth := perDiskBig / perDiskSmall
		rows = append(rows, Row{fmt.Sprintf("convergence per disk, %d → %d disks", small.Disks, big.Disks),
			fmt.Sprintf("%.2fms → %.2fms", perDiskSmall*1000, perDiskBig*1000), "", f2(growth), "≤ 2× (linear)", growth <= TargetScalingRatio})
	}
	return rows
}

// fanoutOK: one disk joining one pool writes the CephCluster, the pool's
// status and the disk's claimedBy, and nothing of any consumer.
func fanoutOK(writes map[string]int) bool {
	total := 0
	for k, v := range writes {
		total += v
		_, resource, _ := strings.Cut(k, " ")
		switch strings.Split(resource, "/")[0] {
		case "cephclusters", "diskpools", "disks":
		default:
			return false
		}
	}
	return total <= 3
}

// Pass is whether every row passes.
func (r Report) Pass() bool {
	for _, row := range r.Rows() {
		if !row.Pass {
			return false
		}
	}
	return true
}

// WriteTable prints the verdict table and the per-scale table.
func (r Report) WriteTable(w io.Writer) {
	fmt.Fprintln(w, r.Settings)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "METRIC\tVALUE\tFLOOR\tRATIO\tTARGET\tPASS")
	for _, row := range r.Rows() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", row.Metric, row.Value, row.Floor, row.Ratio, row.Target, map[bool]string{true: "yes", false: "NO"}[row.Pass])
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DISKS\tCONVERGE (s)\tFLOOR (s)\tRATIO\tWRITES/DISK\tERRORS\tRETRIES\tIDLE W\tRESTART W\tEDIT p50/p99 (ms)\tEDIT FLOOR p50/p99\tPEAK RSS (MiB)")
	for _, s := range r.Scales {
		fmt.Fprintf(tw, "%d\t%.1f\t%.1f\t%.2f\t%.2f\t%.0f\t%.0f\t%d\t%d\t%.0f/%.0f\t%.0f/%.0f\t%.1f\n", s.Disks, s.ConvergeSeconds, s.FloorSeconds,
			s.ConvergeSeconds/s.FloorSeconds, s.WritesPerDisk(), s.ReconcileErrors, s.ReconcileRetries, s.IdleWrites, s.RestartWrites,
			s.EditP50Millis, s.EditP99Millis, s.EditFloorP50Millis, s.EditFloorP99Millis, float64(s.PeakRSSBytes)/(1<<20))
	}
	tw.Flush()
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

// chart plots convergence time (plugin and floor) and writes per disk
// against inventory size.
func (r Report) chart(path string) error {
	converge, floor, writes := plotter.XYs{}, plotter.XYs{}, plotter.XYs{}
	for _, s := range r.Scales {
		converge = append(converge, plotter.XY{X: float64(s.Disks), Y: s.ConvergeSeconds})
		floor = append(floor, plotter.XY{X: float64(s.Disks), Y: s.FloorSeconds})
		writes = append(writes, plotter.XY{X: float64(s.Disks), Y: s.WritesPerDisk()})
	}
	left := plot.New()
	left.Title.Text = "Discovery convergence"
	left.X.Label.Text = "disks"
	left.Y.Label.Text = "seconds"
	if err := plotutil.AddLinePoints(left, "ceph-rook", converge, "floor (plain client, 8 workers)", floor); err != nil {
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
	limit := plotter.NewFunction(func(float64) float64 { return TargetWritesPerDisk })
	limit.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
	right.Add(limit)
	right.Legend.Add("target", limit)
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

func f1(v float64) string { return fmt.Sprintf("%.1f", v) }
func f2(v float64) string { return fmt.Sprintf("%.2f", v) }
