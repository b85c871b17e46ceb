package main

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// memorySampler records the machine's peak memory in use (MemTotal less
// MemAvailable, what /proc/meminfo says the kernel could not hand out
// without swapping) every few seconds for the whole run: every node,
// daemon and the e2e itself share the one machine.
type memorySampler struct {
	mu   sync.Mutex
	peak uint64
	at   string
	// phase is the phase running, for saying when the peak came.
	phase string
	stop  chan struct{}
}

func startMemorySampler() *memorySampler {
	m := &memorySampler{stop: make(chan struct{})}
	go func() {
		tick := time.NewTicker(2 * time.Second)
		defer tick.Stop()
		for {
			m.sample()
			select {
			case <-m.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return m
}

func (m *memorySampler) sample() {
	used, ok := memoryInUse()
	if !ok {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if used > m.peak {
		m.peak, m.at = used, m.phase
	}
}

func (m *memorySampler) enter(phase string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.phase = phase
}

// Peak stops sampling and returns the peak in bytes and the phase it came in.
func (m *memorySampler) Peak() (uint64, string) {
	close(m.stop)
	m.sample()
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.peak, m.at
}

// memoryInUse is MemTotal - MemAvailable in bytes.
func memoryInUse() (uint64, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	kib := map[string]uint64{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) >= 2 {
			v, _ := strconv.ParseUint(fields[1], 10, 64)
			kib[strings.TrimSuffix(fields[0], ":")] = v
		}
	}
	total, avail := kib["MemTotal"], kib["MemAvailable"]
	if total == 0 || avail > total {
		return 0, false
	}
	return (total - avail) << 10, true
}
