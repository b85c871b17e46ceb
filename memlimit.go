package main

import (
	"os"
	"strconv"
	"strings"
)

// The Go runtime's soft memory limit. The garbage collector works harder as
// the heap nears it instead of letting the heap double, so it is what keeps
// the plugin inside its container's memory limit.
const (
	// fallbackMemoryLimit applies where no container limit is found (a
	// developer's machine, `just run`, the benchmark): 64 MiB keeps a
	// 10,000-disk inventory in about 110 MiB of resident memory.
	fallbackMemoryLimit = 64 << 20
	// memoryLimitPercent of the container's limit goes to the plugin's heap.
	// The rest is for what shares the cgroup without counting towards the
	// Go limit: the binary's resident pages (about 36 MiB) and, during an
	// install, the Helm helper process (about 70 MiB at its peak).
	memoryLimitPercent = 60
	// unlimitedCgroupV1 and above is how cgroup v1 says "no limit"
	// (the page-rounded maximum int64).
	unlimitedCgroupV1 = 1 << 62
)

// The files a container's memory limit is read from, cgroup v2 first.
var (
	cgroupV2MemoryMax   = "/sys/fs/cgroup/memory.max"
	cgroupV1MemoryLimit = "/sys/fs/cgroup/memory/memory.limit_in_bytes"
)

// MemoryLimit is the soft memory limit for a container limit of
// containerLimit bytes (0: none found). GOMEMLIMIT, when set, wins: the Go
// runtime has applied it before main runs, and MemoryLimit's caller leaves
// it alone.
func MemoryLimit(containerLimit int64) int64 {
	if containerLimit <= 0 {
		return fallbackMemoryLimit
	}
	return containerLimit / 100 * memoryLimitPercent
}

// ParseCgroupMemoryLimit reads a container memory limit from the contents
// of cgroup v2's memory.max or cgroup v1's memory.limit_in_bytes; 0 means
// no limit ("max", v1's near-int64 maximum, or text it cannot read).
func ParseCgroupMemoryLimit(content string) int64 {
	v, err := strconv.ParseInt(strings.TrimSpace(content), 10, 64)
	if err != nil || v <= 0 || v >= unlimitedCgroupV1 {
		return 0
	}
	return v
}

// containerMemoryLimit is this process's cgroup memory limit, 0 if none.
func containerMemoryLimit() int64 {
	for _, path := range []string{cgroupV2MemoryMax, cgroupV1MemoryLimit} {
		if content, err := os.ReadFile(path); err == nil {
			return ParseCgroupMemoryLimit(string(content))
		}
	}
	return 0
}
