package rq_test

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/mlx5gen/mlx5gen/runtime/rq"
)

// TestReset: after Reset the next receive is written at index 0, the
// doorbell record counts from 0 again, and the ring's room is whole;
// Reset keeps a closed writer closed.
func TestReset(t *testing.T) {
	ring := make([]byte, 4*16)
	dbr := &[4]byte{}
	q, err := rq.New(rq.Config{Mem: rq.Memory{Ring: ring, DBR: dbr}, Stride: 16})
	if err != nil {
		t.Fatal(err)
	}
	sge := []rq.SGE{{Length: 8, LKey: 0x11, Addr: 0x1000}}
	for i := range 3 {
		if err := q.Post(uint64(i), sge); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.Retire(); err != nil {
		t.Fatal(err)
	}
	q.Reset()
	if q.Head() != 0 || q.Tail() != 0 || q.Outstanding() != 0 {
		t.Fatalf("after Reset: head %d, tail %d", q.Head(), q.Tail())
	}
	if *dbr != [4]byte{} {
		t.Fatalf("after Reset the doorbell record holds %x, want 0", dbr[:])
	}
	clear(ring)
	for i := range 4 { // the whole ring: nothing of before holds room
		if err := q.Post(uint64(10+i), sge); err != nil {
			t.Fatalf("post %d after Reset: %v", i, err)
		}
	}
	if got := binary.BigEndian.Uint32(dbr[:]); got != 4 {
		t.Fatalf("doorbell record %d after 4 posts from a reset, want 4", got)
	}
	if binary.BigEndian.Uint32(ring[4:8]) != 0x11 {
		t.Fatal("the first receive after Reset is not at index 0")
	}
	if id, err := q.Retire(); err != nil || id != 10 {
		t.Fatalf("oldest after Reset: %d, %v, want 10", id, err)
	}
	q.Close()
	q.Reset()
	if err := q.Post(1, sge); !errors.Is(err, rq.ErrClosed) {
		t.Fatalf("post after Close and Reset: %v, want ErrClosed", err)
	}
}
