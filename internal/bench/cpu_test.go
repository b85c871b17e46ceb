package bench

import (
	"os"
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
