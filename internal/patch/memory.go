package patch

import "sync"

// Memory is the one way the plugin remembers its own writes: what it
// last wrote to an object, and on top of which resourceVersion of it. The
// cache lags behind a write; while it still serves the version the write
// was based on, the remembered value is what the object really holds, and
// a reconcile in that window neither writes the same thing again nor
// patches from a stale base. Once the cache serves any other version (it
// caught up, someone else wrote, or the object was deleted and recreated)
// the memory is stale and the cache is the truth again.
//
// The inventory remembers Disk statuses (a hash), the device-list job the
// CephCluster it patched.
type Memory[V any] struct {
	mu      sync.Mutex
	written map[string]writtenOn[V]
}

type writtenOn[V any] struct {
	base  string
	value V
}

// Remember records value as written to key on top of resourceVersion base
// ("" when the object was created by the write).
func (m *Memory[V]) Remember(key, base string, value V) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.written == nil {
		m.written = map[string]writtenOn[V]{}
	}
	m.written[key] = writtenOn[V]{base: base, value: value}
}

// Since is what was last written to key, if the cache still serves the
// version that write was based on (cached: its resourceVersion, "" when the
// cache has no such object).
func (m *Memory[V]) Since(key, cached string) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w, ok := m.written[key]
	if !ok || w.base != cached {
		var zero V
		return zero, false
	}
	return w.value, true
}

// Last is what was last written to key, stale or not: a watch event of
// that very write is recognised by it.
func (m *Memory[V]) Last(key string) (V, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	w, ok := m.written[key]
	return w.value, ok
}

// Forget drops what was remembered of key (the object was deleted).
func (m *Memory[V]) Forget(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.written, key)
}
