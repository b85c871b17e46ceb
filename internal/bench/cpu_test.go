package bench

import (
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCPUSince(t *testing.T) {
	before := CPU{"api server": 10, "etcd": 2, "benchmark": 1, "machine": 100}
	after := CPU{"api server": 14, "etcd": 3, "benchmark": 1.5, "plugin": 2, "machine": 110}
	got := CPUSince(before, after)
	assert.Equal(t, CPU{"api server": 4, "etcd": 1, "benchmark": 0.5, "plugin": 2, "others": 2.5}, got,
		"a process started in between counts from zero; the rest of the machine's busy time is someone else's")
	assert.Equal(t, 7.5, got.Ours())
	assert.Equal(t, CPU{"api server": 0, "others": 0}, CPUSince(CPU{"api server": 5, "machine": 9}, CPU{"api server": 4, "machine": 8}),
		"a restarted process never counts negative")
}

func TestThisProcessUsesCPU(t *testing.T) {
	for range 1_000_000 {
		_ = os.Getpid()
	}
	assert.Positive(t, procCPU(os.Getpid()))
	assert.Positive(t, machineBusy())
	assert.Zero(t, procCPU(-1), "an unreadable process counts nothing")
}

func TestARoundOthersBusiedIsDisturbed(t *testing.T) {
	cores := float64(runtime.NumCPU())
	quiet := Sample{FloorSeconds: 10, ConvergeSeconds: 10, FloorCPU: CPU{"others": 0.05 * 10 * cores}, ConvergeCPU: CPU{"others": 0}}
	busyFloor := Sample{FloorSeconds: 10, ConvergeSeconds: 10, FloorCPU: CPU{"others": 0.2 * 10 * cores}, ConvergeCPU: CPU{}}
	busyPlugin := Sample{FloorSeconds: 10, ConvergeSeconds: 10, FloorCPU: CPU{}, ConvergeCPU: CPU{"others": 0.2 * 10 * cores}}
	assert.False(t, quiet.Disturbed(), "5% of the machine is the background")
	assert.True(t, busyFloor.Disturbed(), "a busy floor makes the ratio look better than it is")
	assert.True(t, busyPlugin.Disturbed(), "a busy convergence makes it look worse")
	r := Result{Samples: []Sample{quiet, busyFloor, busyPlugin}}
	r.summarise()
	assert.Equal(t, 2, r.Disturbed)
}
