package gate

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestEnterLeave: Enter succeeds until Close, then fails; Close is
// idempotent and returns at once when the owner is outside.
func TestEnterLeave(t *testing.T) {
	var g Gate
	if !g.Enter() {
		t.Fatal("Enter of an open gate failed")
	}
	if !g.Inside() {
		t.Fatal("not inside after Enter")
	}
	g.Leave()
	if err := g.Close(time.Second); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(time.Second); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if g.Enter() || g.Inside() {
		t.Fatal("Enter after Close succeeded, or left the owner inside")
	}
	if !g.Closed() {
		t.Fatal("Closed is false after Close")
	}
}

// TestCloseWaits: Close from another goroutine returns only after the
// owner leaves; a Close that times out says so and leaves the gate
// closed, and a later Close succeeds.
func TestCloseWaits(t *testing.T) {
	var g Gate
	g.Enter()
	done := make(chan error)
	go func() { done <- g.Close(5 * time.Second) }()
	select {
	case err := <-done:
		t.Fatalf("Close returned while the owner was inside: %v", err)
	case <-time.After(30 * time.Millisecond):
	}
	g.Leave()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	var h Gate
	h.Enter()
	err := h.Close(10 * time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "stayed inside") {
		t.Fatalf("Close with the owner inside: %v, want a time-out", err)
	}
	if h.Enter() {
		t.Fatal("Enter after a timed-out Close succeeded")
	}
	h.Leave()
	if err := h.Close(time.Second); err != nil {
		t.Fatalf("Close after the owner left: %v", err)
	}
}

// TestPause: while paused, Enter waits; Resume lets it in; Pause waits
// for an owner inside and gives up, resumed, after its wait.
func TestPause(t *testing.T) {
	var g Gate
	if err := g.Pause(time.Second); err != nil {
		t.Fatal(err)
	}
	entered := make(chan bool)
	go func() { entered <- g.Enter() }()
	select {
	case <-entered:
		t.Fatal("Enter went in while paused")
	case <-time.After(30 * time.Millisecond):
	}
	g.Resume()
	if !<-entered {
		t.Fatal("Enter failed after Resume")
	}
	if err := g.Pause(10 * time.Millisecond); err == nil {
		t.Fatal("Pause with the owner inside did not time out")
	}
	g.Leave()
	if !g.Enter() {
		t.Fatal("a timed-out Pause left the gate paused")
	}
	g.Leave()
	// Close while an Enter waits on a pause: the Enter fails.
	if err := g.Pause(time.Second); err != nil {
		t.Fatal(err)
	}
	go func() { entered <- g.Enter() }()
	time.Sleep(5 * time.Millisecond)
	if err := g.Close(time.Second); err != nil {
		t.Fatal(err)
	}
	if <-entered {
		t.Fatal("Enter waiting on a pause went in after Close")
	}
}

// TestWord: a published word is read back.
func TestWord(t *testing.T) {
	var w Word
	w.Publish(42)
	if w.Load() != 42 {
		t.Fatal("Load did not return the published value")
	}
}

// TestCloseRacesOwnerUnmap is the contract end to end: an owner writes
// into a mapping between Enter and Leave as fast as it can while another
// goroutine closes the gate and unmaps the memory at once. A write after
// the unmap faults the process (SIGSEGV is not recoverable), so the test
// passing is the proof; thousands of rounds, each with a fresh mapping.
func TestCloseRacesOwnerUnmap(t *testing.T) {
	rounds := 2000
	if testing.Short() {
		rounds = 300
	}
	page := unix.Getpagesize()
	for r := range rounds {
		mem, err := unix.Mmap(-1, 0, page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			t.Fatal(err)
		}
		var g Gate
		var wrote atomic.Int64
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				if !g.Enter() {
					return
				}
				mem[i%page]++ // faults if the closer unmapped it
				wrote.Add(1)
				g.Leave()
			}
		}()
		for wrote.Load() < int64(r%7) { // vary the moment of Close
			time.Sleep(time.Microsecond)
		}
		if err := g.Close(5 * time.Second); err != nil {
			t.Fatal(err)
		}
		if err := unix.Munmap(mem); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
	}
}
