package device

import (
	"errors"
	"fmt"
)

// ErrCQOverrun is the error of CQ.Poll once the device found the CQ full:
// a CQE had no room, so completions were lost and the device writes no
// more to the CQ (libibverbs reports it as IBV_EVENT_CQ_ERR). The QP
// whose completion was lost moves to error, and so does every other QP
// completing to the CQ when it next has a completion for it (each with
// IBV_EVENT_QP_FATAL). The CQ cannot be used again: close it and its QPs,
// and create a larger CQ.
// Size a CQ for at least, summed over every QP completing to it, the
// signaled send work requests that may be outstanding (every one, with
// QPConfig.SigAll; an error completes unsignaled ones too, so
// MaxSendWR is the safe count) plus the receive work requests that may be
// posted (MaxRecvWR; for an SRQ, its MaxWR once).
var ErrCQOverrun = errors.New("CQ overrun")

// overrunErr returns the error of a CQ the backend reports overrun, nil
// otherwise. Poll calls it only when it found no completion: a poller
// reads what the device wrote before the overrun first, and the check
// stays off the path of a poll that returns work.
func (q *CQ) overrunErr() error {
	o, ok := q.b.(Overrunner)
	if !ok || !o.Overrun() {
		return nil
	}
	return fmt.Errorf("device: %s of %d CQEs: %w: the device had a completion and no room for it, so it lost it "+
		"and writes no more to this CQ; close it and create a CQ of at least the signaled send work requests "+
		"that may be outstanding plus the receive work requests that may be posted, summed over every QP "+
		"completing to it, and poll it before it fills", q.n.what, q.CQEs(), ErrCQOverrun)
}
