package cq

import (
	"strings"
	"testing"

	"github.com/mlx5gen/mlx5gen/runtime/rq"
)

// TestAddQPNilQueues: a queue interface holding nil (an adapter over a
// nil writer, or a nil pointer) is refused by AddQP, naming the queue,
// rather than panicking at the first completion.
func TestAddQPNilQueues(t *testing.T) {
	m := newMem(t, 8, 4)
	c := newCQ(t, m, 0)
	var nilRQ *fakeRQ
	for _, tc := range []struct {
		qp   *QP
		want string
	}{
		{&QP{QPN: 1, RQ: RQ{Q: (*rq.RQ)(nil)}}, "QP.RQ"},
		{&QP{QPN: 2, RQ: nilRQ}, "QP.RQ"},
		{&QP{QPN: 3, SQ: SQ{}}, "QP.SQ"},
		{&QP{QPN: 4, SRQ: SRQ{}}, "QP.SRQ"},
	} {
		if err := c.AddQP(tc.qp); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("AddQP(%+v): %v, want an error naming %s", *tc.qp, err, tc.want)
		}
	}
	if err := c.AddQP(&QP{QPN: 5, SQ: newFakeSQ(8)}); err != nil {
		t.Errorf("AddQP of a QP with a send queue: %v", err)
	}
}
