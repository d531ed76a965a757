package sq_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// newLenSQ is newSQ with the port's max_msg_sz (0: unknown), without
// mkey tags.
func newLenSQ(t *testing.T, maxMsg uint64) (*sq.SQ, *qmem.Memory) {
	t.Helper()
	return mustSQConf(t, 64, func(c *sq.Config) { c.QP.MaxMsgSize, c.QP.MkeyTagSupported = maxMsg, false })
}

// lengthForm posts one work request of length n (or with a list or
// inline data holding n) in one posting form; the work requests before it
// in the batch are good.
type lengthForm struct {
	name   string
	setter string // the call the error names
	post   func(q *sq.SQ, n uint32) error
}

var lengthForms = []lengthForm{
	{"RDMAWrite+SetSGE", "ibv_wr_set_sge", func(q *sq.SQ, n uint32) error {
		if err := q.RDMAWrite(0x200, 0x20000); err != nil {
			return err
		}
		return q.SetSGE(0x100, 0x10000, n)
	}},
	{"Send+SetSGE", "ibv_wr_set_sge", func(q *sq.SQ, n uint32) error {
		if err := q.Send(); err != nil {
			return err
		}
		return q.SetSGE(0x100, 0x10000, n)
	}},
	{"RDMARead+SetSGE", "ibv_wr_set_sge", func(q *sq.SQ, n uint32) error {
		if err := q.RDMARead(0x200, 0x20000); err != nil {
			return err
		}
		return q.SetSGE(0x100, 0x10000, n)
	}},
	{"RDMAWriteSGE", "ibv_wr_set_sge", func(q *sq.SQ, n uint32) error { return q.RDMAWriteSGE(0x200, 0x20000, 0x100, 0x10000, n) }},
	{"RDMAReadSGE", "ibv_wr_set_sge", func(q *sq.SQ, n uint32) error { return q.RDMAReadSGE(0x200, 0x20000, 0x100, 0x10000, n) }},
	{"SendSGE", "ibv_wr_set_sge", func(q *sq.SQ, n uint32) error { return q.SendSGE(0x100, 0x10000, n) }},
	{"RDMAWriteBurst", "ibv_wr_set_sge", func(q *sq.SQ, n uint32) error {
		// The bad request is the burst's last: the good ones before it
		// must not be written either.
		return q.RDMAWriteBurst([]sq.RDMAWriteReq{
			{WRID: 1, Raddr: 0x20000, Addr: 0x10000, RKey: 0x200, LKey: 0x100, Length: 64},
			{WRID: 2, Raddr: 0x20040, Addr: 0x10040, RKey: 0x200, LKey: 0x100, Length: 0},
			{WRID: 3, Raddr: 0x20080, Addr: 0x10080, RKey: 0x200, LKey: 0x100, Length: n},
		})
	}},
	{"SetSGEList", "ibv_wr_set_sge_list", func(q *sq.SQ, n uint32) error {
		if err := q.Send(); err != nil {
			return err
		}
		return q.SetSGEList([]mlx.SGE{{Addr: 0x10000, Length: 0, LKey: 0x100}, {Addr: 0x20000, Length: n, LKey: 0x101}})
	}},
}

// wrOf is the index the error must name: the burst's bad request is its
// third work request.
func wrOf(f lengthForm, before int) int {
	if f.name == "RDMAWriteBurst" {
		return before + 2
	}
	return before
}

// bookkeeping is what a rejected batch must leave as it was: the ring, the
// doorbell record, the BlueFlame register, the slots and the producer
// index.
type bookkeeping struct {
	dev   device
	slots []sq.Slot
	pi    uint32
}

func keep(q *sq.SQ, mem *qmem.Memory) bookkeeping {
	return bookkeeping{snapshot(mem), slices.Clone(q.Slots), q.CurPost()}
}

func (b bookkeeping) changed(q *sq.SQ, mem *qmem.Memory) string {
	switch {
	case b.dev.changed(mem) != "":
		return b.dev.changed(mem)
	case !slices.Equal(b.slots, q.Slots):
		return "the slots"
	case b.pi != q.CurPost():
		return fmt.Sprintf("the producer index (%d, was %d)", q.CurPost(), b.pi)
	}
	return ""
}

// TestLengthRules posts each length the device would misread through
// every posting form, as the batch's first and as its second work
// request: the call is refused with the rule, naming the work request,
// the call, the field, the value and the limit (errors.Is EINVAL), the
// call stores nothing, Complete returns the same error and rolls back,
// and the queue takes the next batch where it was. The longest lengths
// the rules allow are posted.
func TestLengthRules(t *testing.T) {
	cases := []struct {
		maxMsg uint64
		length uint32
		rule   string
		limit  uint64
	}{
		{0, 0x8000000c, "ibv_wr.sge_length", 1<<31 - 1},
		{0, 1 << 31, "ibv_wr.sge_length", 1<<31 - 1},
		{0, 0x80000064, "ibv_wr.sge_length", 1<<31 - 1},
		{0, 0xffffffff, "ibv_wr.sge_length", 1<<31 - 1},
		{1 << 30, 0x8000000c, "ibv_wr.sge_length", 1<<31 - 1}, // bit 31 is named first
		{1 << 30, 1<<30 + 1, "ibv_wr.msg_size", 1 << 30},
		{64, 65, "ibv_wr.msg_size", 64},
	}
	for _, c := range cases {
		for _, f := range lengthForms {
			for before := range 2 {
				name := fmt.Sprintf("%s/max_msg_sz=%#x/%#x/wr%d", f.name, c.maxMsg, c.length, before)
				t.Run(name, func(t *testing.T) {
					q, mem := newLenSQ(t, c.maxMsg)
					start := keep(q, mem)
					if err := q.Start(); err != nil {
						t.Fatal(err)
					}
					for range before {
						if err := q.RDMAWriteSGE(0x200, 0x20000, 0x100, 0x10000, 64); err != nil {
							t.Fatal(err)
						}
					}
					atCall := keep(q, mem)
					err := f.post(q, c.length)
					var re *mlx.RuleError
					if !errors.As(err, &re) {
						t.Fatalf("got %v, want a *RuleError", err)
					}
					checkLengthError(t, err, re, c.rule, f.setter, wrOf(f, before), c.length, c.limit)
					// The one-call forms and the burst write nothing; a
					// setter writes nothing after its builder's WQE.
					if f.name == "RDMAWriteSGE" || f.name == "RDMAReadSGE" || f.name == "SendSGE" || f.name == "RDMAWriteBurst" {
						if what := atCall.changed(q, mem); what != "" {
							t.Fatalf("the rejected call changed %s", what)
						}
					}
					completeFails(t, q, mem, start, err)
					// The queue goes on from where it was: the longest
					// length allowed is posted at the same index.
					ok := uint32(1<<31 - 1)
					if c.maxMsg != 0 {
						ok = uint32(c.maxMsg)
					}
					if err := q.Start(); err != nil {
						t.Fatal(err)
					}
					if err := f.post(q, ok); err != nil {
						t.Fatalf("length %#x: %v", ok, err)
					}
					if err := q.Complete(); err != nil {
						t.Fatal(err)
					}
				})
			}
		}
	}
}

// completeFails completes a batch that failed with err: Complete returns
// the latched err, and the doorbell record, the BlueFlame register and
// the producer index are as they were at start.
func completeFails(t *testing.T, q *sq.SQ, mem *qmem.Memory, start bookkeeping, err error) {
	t.Helper()
	if err2 := q.Complete(); err2 != err {
		t.Fatalf("Complete: %v, want the latched %v", err2, err)
	}
	if what := start.dev.changed(mem); what == "the doorbell record" || what == "the BlueFlame register" {
		t.Fatalf("the failed batch changed %s", what)
	}
	if q.CurPost() != start.pi {
		t.Fatalf("producer index %d after the failed batch, want %d", q.CurPost(), start.pi)
	}
}

func checkLengthError(t *testing.T, err error, re *mlx.RuleError, rule, setter string, wr int, value uint32, limit uint64) {
	t.Helper()
	if re.Rule != rule || !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("got %v, want rule %s (EINVAL)", err, rule)
	}
	if re.WR != wr || re.Func.String() != setter || re.Value < uint64(value) || re.Limit != limit || re.Test != mlx.TestMax {
		t.Fatalf("%v: work request %d, call %s, value %d, limit %d; want %d, %s, %d, %d", err, re.WR, re.Func, re.Value, re.Limit, wr, setter, value, limit)
	}
	if setter == "ibv_wr_set_sge_list" && rule == "ibv_wr.sge_length" && re.Field != "sg_list[1].length" {
		t.Fatalf("%v names field %q, want the element sg_list[1].length", err, re.Field)
	}
	msg := err.Error()
	for _, s := range []string{fmt.Sprintf("work request %d", wr), re.Field, fmt.Sprint(re.Value), fmt.Sprint(limit), rule} {
		if !strings.Contains(msg, s) {
			t.Fatalf("%q does not say %q", msg, s)
		}
	}
}

// TestLengthRulesListAndInline: a list whose elements are each allowed
// but whose sum is over max_msg_sz, and inline data over max_msg_sz, are
// refused with ibv_wr.msg_size; with max_msg_sz unknown the same list is
// posted (the sum is not checked), and a list's bit-31 element is named.
func TestLengthRulesListAndInline(t *testing.T) {
	list := []mlx.SGE{{Addr: 0x10000, Length: 1 << 29, LKey: 0x100}, {Addr: 0x20000, Length: 1<<29 + 1, LKey: 0x101}}
	for _, tc := range []struct {
		name   string
		maxMsg uint64
		call   func(q *sq.SQ) error
		field  string // "" when the call is accepted
		value  uint64
	}{
		{"list sum", 1 << 30, func(q *sq.SQ) error { return q.SetSGEList(list) }, "sum of sg_list lengths", 1<<30 + 1},
		{"list sum unknown max", 0, func(q *sq.SQ) error { return q.SetSGEList(list) }, "", 0},
		{"list bit 31", 0, func(q *sq.SQ) error {
			return q.SetSGEList([]mlx.SGE{{Length: 64}, {Length: 64}, {Length: 0x8000000c}})
		}, "sg_list[2].length", 0x8000000c},
		{"inline", 16, func(q *sq.SQ) error { return q.SetInlineData(make([]byte, 17)) }, "inline length", 17},
		{"inline list", 16, func(q *sq.SQ) error { return q.SetInlineDataList([][]byte{make([]byte, 9), make([]byte, 8)}) }, "inline length", 17},
		{"inline at max", 16, func(q *sq.SQ) error { return q.SetInlineData(make([]byte, 16)) }, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, mem := newLenSQ(t, tc.maxMsg)
			start := keep(q, mem)
			if err := q.Start(); err != nil {
				t.Fatal(err)
			}
			if err := q.RDMAWrite(0x200, 0x20000); err != nil {
				t.Fatal(err)
			}
			if tc.field == "" {
				if err := tc.call(q); err != nil {
					t.Fatal(err)
				}
				if err := q.Complete(); err != nil {
					t.Fatal(err)
				}
				return
			}
			before := snapshot(mem)
			err := tc.call(q)
			var re *mlx.RuleError
			if !errors.As(err, &re) || re.Field != tc.field || re.Value != tc.value || re.WR != 0 || !errors.Is(err, syscall.EINVAL) {
				t.Fatalf("got %v, want field %s value %d in work request 0 (EINVAL)", err, tc.field, tc.value)
			}
			if what := before.changed(mem); what != "" {
				t.Fatalf("the rejected setter changed %s", what)
			}
			if err2 := q.Complete(); err2 != err || q.CurPost() != start.pi {
				t.Fatalf("Complete: %v at %d, want %v at %d", err2, q.CurPost(), err, start.pi)
			}
		})
	}
}
