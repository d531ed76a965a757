package device

import (
	"context"
	"testing"
	"time"
)

// eventsChannel is a backend channel whose events come from a Go channel.
type eventsChannel struct{ ev chan uint32 }

func (e *eventsChannel) Wait(ctx context.Context) (uint32, error) {
	select {
	case cqn := <-e.ev:
		return cqn, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func (e *eventsChannel) Ack(BackendCQ, int) {}
func (e *eventsChannel) Close() error       { return nil }

// TestWaitForHandOff has eight goroutines wait on eight CQs of one
// channel, one event each, the events coming in another order: whoever
// reads an event of another CQ keeps it for its waiter. An event kept
// after the reader let the next one in (the order waitFor had until
// 2026-11-28) is lost when that one has just looked for it and gone to
// read the backend: every event was read, and a waiter waits on for one
// more that never comes (devicetest's SharedWaiters timed out once in CI
// this way, under qemu-user; this fails in about half the runs of the
// old order on two cores). No round may need more than the events sent.
func TestWaitForHandOff(t *testing.T) {
	rounds := 10000
	if testing.Short() {
		rounds /= 10
	}
	for r := range rounds {
		const n = 8
		b := &eventsChannel{ev: make(chan uint32, n)}
		ch := &CompChannel{b: b, turn: make(chan struct{}, 1), cqs: map[uint32]*chanCQ{}}
		var qs []*CQ
		for i := range n {
			ch.cqs[uint32(i+1)] = &chanCQ{}
			qs = append(qs, &CQ{mem: CQMemory{CQN: uint32(i + 1)}})
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		errs := make(chan error, n)
		for _, q := range qs {
			go func() { errs <- ch.waitFor(ctx, q) }()
		}
		for i := range n {
			b.ev <- uint32((i+r)%n + 1)
		}
		for range qs {
			if err := <-errs; err != nil {
				cancel()
				t.Fatalf("round %d: a waiter ended with %v after every event was read", r, err)
			}
		}
		cancel()
	}
}
