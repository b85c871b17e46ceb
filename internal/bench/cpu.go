package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// CPU is CPU seconds by process: the API server, etcd, the plugin, the
// benchmark itself (its clients, proxy and watches), and everything else
// on the machine ("others"). On a machine of two shared cores these say
// what a time was spent on, and how much of the machine was someone else's.
type CPU map[string]float64

// clockTicks is USER_HZ, the unit of /proc's CPU times (100 on Linux).
const clockTicks = 100

// cpuNow reads the CPU time used so far by the run's processes and the
// whole machine's busy time.
func (r *run) cpuNow() CPU {
	out := CPU{"benchmark": procCPU(os.Getpid())}
	for name, pid := range controlPlanePids() {
		out[name] = procCPU(pid)
	}
	if r.plugin != nil {
		out["plugin"] = procCPU(r.plugin.Pid())
	}
	out["machine"] = machineBusy()
	return out
}

// CPUSince is what each process used between two readings; "others" is
// the machine's busy time that none of them used.
func CPUSince(before, after CPU) CPU {
	out := CPU{}
	ours := 0.0
	for k, v := range after {
		if k == "machine" {
			continue
		}
		out[k] = max(0, v-before[k])
		ours += out[k]
	}
	out["others"] = max(0, after["machine"]-before["machine"]-ours)
	return out
}

func (c CPU) String() string {
	return joinSorted(c, func(k string, v float64) string { return fmt.Sprintf("%s %.1f", k, v) })
}

// procCPU is a process's user and system time in seconds (0 when it
// cannot be read).
func procCPU(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name may hold spaces; the fields after it are fixed.
	_, rest, ok := strings.Cut(string(data), ") ")
	if !ok {
		return 0
	}
	fields := strings.Fields(rest)
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / clockTicks
}

// controlPlanePids finds this process's kube-apiserver and etcd children
// (envtest starts them).
func controlPlanePids() map[string]int {
	out := map[string]int{}
	self := strconv.Itoa(os.Getpid())
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		s := string(data)
		open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || closing < open {
			continue
		}
		fields := strings.Fields(s[closing+1:])
		if len(fields) < 2 || fields[1] != self {
			continue
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(s[:open]))
		switch s[open+1 : closing] {
		case "kube-apiserver":
			out["api server"] = pid
		case "etcd":
			out["etcd"] = pid
		}
	}
	return out
}

// machineBusy is the machine's CPU time so far, all cores, not idle.
func machineBusy() float64 {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(data), "\n")
	fields := strings.Fields(line)
	if len(fields) < 5 || fields[0] != "cpu" {
		return 0
	}
	busy := 0.0
	for i, f := range fields[1:] {
		v, _ := strconv.ParseFloat(f, 64)
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		if i >= 8 { // guest times are already in user
			break
		}
		busy += v
	}
	return busy / clockTicks
}

// Ours is the CPU the run's own processes used (all but "others").
func (c CPU) Ours() float64 {
	total := 0.0
	for k, v := range c {
		if k != "others" && k != "machine" {
			total += v
		}
	}
	return total
}

// OthersShare is the part of the machine's cores that other processes
// used over seconds: a sample measured while the machine was busy with
// someone else's work is noise, not a result.
func (c CPU) OthersShare(seconds float64) float64 {
	if seconds <= 0 {
		return 0
	}
	return c["others"] / (seconds * float64(runtime.NumCPU()))
}
