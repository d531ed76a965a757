//go:build cgo

package verbs

import (
	"sync"
	"unsafe"
)

// overruns holds the CQs (their struct ibv_cq *) whose IBV_EVENT_CQ_ERR
// was read: on hardware an overrun is known only as that asynchronous
// event, which Context.AsyncEvent reads (decodeEvent records it here).
// No goroutine reads events behind the program's back: the overrun
// error of device.CQ.Poll appears once the program read the event. A CQ
// leaves the set when it is destroyed, before its pointer can be reused.
var overruns sync.Map

// markOverrun records the overrun of the CQ at ptr, one of c's (the
// caller holds c.mu).
func (c *vctx) markOverrun(ptr unsafe.Pointer) {
	if _, ok := c.cqs[ptr]; ok {
		overruns.Store(ptr, struct{}{})
	}
}

// Overrun reports whether the CQ's IBV_EVENT_CQ_ERR was read
// (device.Overrunner): a map lookup, no system call, since CQ.Poll asks
// after every poll that found nothing.
func (q *vcq) Overrun() bool {
	_, ok := overruns.Load(q.cq.Ptr())
	return ok
}
