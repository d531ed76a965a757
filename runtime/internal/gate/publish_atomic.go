//go:build !amd64 || race

package gate

import "sync/atomic"

// publish is a release store: sync/atomic's (STLR on arm64, a fenced
// store elsewhere); under the race detector on every architecture, so
// that it sees the hand-off.
func publish(p *uint32, v uint32) { atomic.StoreUint32(p, v) }
