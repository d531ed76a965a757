// Package device is the one API a program opens an mlx5 device with, on
// hardware or on the simulator: Open → Context → PD → MR, CQ, QP → the
// ready send queue writer (runtime/sq), receive queue writer
// (runtime/rq) and CQ poller (runtime/cq) over the device's queue memory.
//
// The device itself is a Backend, picked by the name given to Open,
// database/sql style: a backend package registers itself from its init
// (Register), and a program imports the ones it wants for their side
// effect:
//
//	import _ "github.com/mlx5gen/mlx5gen/runtime/device/verbs" // "mlx5_0", "" (the first device)
//	import _ "github.com/mlx5gen/mlx5gen/runtime/sim"          // "sim:..."
//
// The package is pure Go (no cgo, no rdma-core): the hardware backend
// alone uses cgo. The API checks every argument before a backend sees it,
// keeps track of what is open, and closes it in reverse order: closing an
// object first closes what was created on it or uses it (a PD its MRs
// and QPs, a CQ the QPs completing to it), every Close is idempotent,
// and a method of a closed object returns an error matching ErrClosed.
// The runtime writers handed out (QP.SQ, QP.RQ, CQ.Poller) work on the
// device's memory directly; closing their object closes them first, so
// that they refuse work (sq.ErrClosed, rq.ErrClosed, cq.ErrClosed) before
// the backend frees that memory.
//
// Goroutines: one goroutine may post on a QP (QP.SQ, QP.RQ) while
// another polls the CQ it completes to (CQ.Poll, PollWait, Wait), with no
// lock between them; SRQ posting and polling take the SRQ's lock. Two
// goroutines posting on one queue, or polling one CQ, at once are not
// supported. Close of any object may come from any goroutine at any
// moment: it waits for a batch, post or poll in progress to end (at most
// the writers' and poller's CloseWait) before the backend frees anything,
// and calls that lose the race return an error matching ErrClosed
// (docs/design.md, "Goroutines").
//
// Four calls block: CQ.Wait, CQ.WaitSolicited, CQ.PollWait and
// Context.AsyncEvent. Each takes a context.Context and ends with its
// error when it is done, and ends promptly (within 10 ms) with an error
// wrapping ErrClosed when what it waits on is closed from another
// goroutine: the CQ, its completion channel or the context. Close waits
// for them to leave before the backend destroys anything, and leaves no
// goroutine behind. A call that fails returns the zero value (an
// AsyncEvent prints "no event"). Every other call returns without
// waiting for the device.
//
// A QP's state is the device's: after an error completion QP.State and
// QP.Query report IBV_QPS_ERR, and Modify(IBV_QPS_RESET) then Connect
// makes it usable again (the move to RESET cleans its CQEs from its CQs
// and starts its writers over, as libmlx5 does). A CQ the device overran
// fails Poll with ErrCQOverrun once its completions are polled; size a CQ
// for the signaled sends outstanding plus the receives posted of every QP
// on it (docs/design.md).
package device

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/mlx5gen/mlx5gen/runtime/internal/gate"
)

// Errors an error of this package matches with errors.Is.
var (
	// ErrNoDevice: the machine has no RDMA device (the error says why:
	// on Linux without RDMA hardware, libibverbs finds no
	// /sys/class/infiniband and fails with ENOSYS).
	ErrNoDevice = errors.New("no RDMA device")
	// ErrClosed: the object, or the context it belongs to, is closed.
	ErrClosed = gate.Closed("closed")
	// ErrNoBackend: no backend is registered for the name given to Open.
	ErrNoBackend = errors.New("no device backend registered")
)

// The import paths of the project's backends, named by the error of Open
// when a program forgot to import one.
const (
	VerbsImport = "github.com/mlx5gen/mlx5gen/runtime/device/verbs"
	SimImport   = "github.com/mlx5gen/mlx5gen/runtime/sim"
)

var (
	regMu    sync.RWMutex
	backends = map[string]Backend{}
)

// Register makes b open the device names that start with prefix. The
// prefix of a non-hardware backend ends with ':' ("sim:"); the empty
// prefix is the hardware backend's, for plain device names. Registering
// a nil backend or a prefix twice panics: it is a mistake in a backend
// package's init, as with database/sql.
func Register(prefix string, b Backend) {
	regMu.Lock()
	defer regMu.Unlock()
	if b == nil {
		panic("device: Register of a nil backend for prefix " + fmt.Sprintf("%q", prefix))
	}
	if prefix != "" && !strings.HasSuffix(prefix, ":") {
		panic(fmt.Sprintf("device: Register: prefix %q does not end with ':'", prefix))
	}
	if _, dup := backends[prefix]; dup {
		panic(fmt.Sprintf("device: Register called twice for prefix %q", prefix))
	}
	backends[prefix] = b
}

// Backends lists the registered prefixes, sorted.
func Backends() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]string, 0, len(backends))
	for p := range backends {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// backendFor picks the backend of name: the one registered for the text
// up to and including its first ':', or the hardware backend ("") for a
// name without one.
func backendFor(name string) (Backend, error) {
	prefix := ""
	if i := strings.IndexByte(name, ':'); i >= 0 {
		prefix = name[:i+1]
	}
	regMu.RLock()
	b := backends[prefix]
	regMu.RUnlock()
	if b != nil {
		return b, nil
	}
	imp := VerbsImport
	switch {
	case prefix == "sim:":
		imp = SimImport
	case prefix != "":
		return nil, fmt.Errorf("device: %q: %w for prefix %q (registered: %q)", name, ErrNoBackend, prefix, Backends())
	}
	return nil, fmt.Errorf("device: %q: %w for prefix %q: import _ %q", name, ErrNoBackend, prefix, imp)
}

// Open opens the device called name: "sim:..." for the simulator, a
// hardware device's name ("mlx5_0"), or "" for the first hardware device.
func Open(name string) (*Context, error) {
	b, err := backendFor(name)
	if err != nil {
		return nil, err
	}
	bc, err := b.Open(name)
	if err != nil {
		return nil, fmt.Errorf("device: open %q: %w", name, err)
	}
	if bc == nil {
		return nil, fmt.Errorf("device: open %q: the backend returned no context and no error", name)
	}
	return newContext(name, bc), nil
}

// List describes the devices of the backend that opens names with prefix
// ("" for the hardware backend).
func List(prefix string) ([]Info, error) {
	probe := prefix
	if prefix != "" && !strings.HasSuffix(prefix, ":") {
		return nil, fmt.Errorf("device: List: prefix %q does not end with ':'", prefix)
	}
	b, err := backendFor(probe)
	if err != nil {
		return nil, err
	}
	return b.List()
}
