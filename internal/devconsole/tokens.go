package devconsole

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"sync"
	"time"
)

// tokens issues the bearer tokens the host hands to plugin pages and that
// the kube-api-proxy accepts. Only hashes are kept, so a lookup compares
// digests rather than secrets.
type tokens struct {
	ttl time.Duration
	now func() time.Time

	mu     sync.Mutex
	expiry map[[sha256.Size]byte]time.Time
}

func newTokens(ttl time.Duration) *tokens {
	return &tokens{ttl: ttl, now: time.Now, expiry: map[[sha256.Size]byte]time.Time{}}
}

// issue returns a new token and when it expires.
func (t *tokens) issue() (string, time.Time) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	token := base64.RawURLEncoding.EncodeToString(raw)
	expires := t.now().Add(t.ttl)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.expiry[sha256.Sum256([]byte(token))] = expires
	t.forgetExpired()
	return token, expires
}

// valid reports whether token was issued here and has not expired.
func (t *tokens) valid(token string) bool {
	if token == "" {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	expires, ok := t.expiry[sha256.Sum256([]byte(token))]
	return ok && t.now().Before(expires)
}

func (t *tokens) forgetExpired() {
	now := t.now()
	for key, expires := range t.expiry {
		if !now.Before(expires) {
			delete(t.expiry, key)
		}
	}
}
