package sq_test

import (
	"math"
	"reflect"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// newDCI makes a DCI writer with two streams.
func newDCI(t testing.TB) (*sq.SQ, *qmem.Memory) {
	t.Helper()
	mem, err := qmem.Plain(16, 0, 256)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	q, err := sq.New(sq.Config{
		Mem: mem, QPN: qpn,
		QP: sq.QP{Type: mlx.QPDCI, SendOps: 0x3ff, MlxSendOps: 0x1f, MaxInlineData: 316, MaxSendSGE: 8,
			Streams: true, LogNumConcurent: 1},
		BF: sq.BlueFlame{UUARN: 1, Size: 256},
	})
	if err != nil {
		t.Fatal(err)
	}
	return q, mem
}

// TestNilArguments: every pointer argument a C function takes is checked
// by the rules: a nil one is a *RuleError naming the rule, never a panic,
// and nothing is written. The batch then fails with the same rule.
func TestNilArguments(t *testing.T) {
	sigMk := func() *sq.Mkey {
		return sq.NewMkey(0x4500, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 8)
	}
	cryptoMk := sq.NewMkey(0x4600, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO, 8)
	plainMk := sq.NewMkey(0x4700, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 8)
	tmpl, err := sq.NewMkeyTemplate(mlx.IBV_ACCESS_LOCAL_WRITE, nil)
	if err != nil {
		t.Fatal(err)
	}
	sges := []mlx.SGE{{Addr: 0x1000, Length: 512, LKey: 7}}
	attr := &mlx.MkeyConfAttr{}
	for _, c := range []struct {
		name, rule string
		dci        bool
		before     func(q *sq.SQ) error // the calls that open the work request
		call       func(q *sq.SQ) error
	}{
		{"BindMW nil mw", "ibv_wr.bind_mw.mw", false, nil,
			func(q *sq.SQ) error { return q.BindMW(nil, 1, &sq.MWBindInfo{Length: 64}) }},
		{"BindMW nil info", "ibv_wr.bind_mw.bind_info", false, nil,
			func(q *sq.SQ) error { return q.BindMW(&sq.MW{RKey: 1}, 1, nil) }},
		{"MkeyConfigure nil mkey", "mkey_configure.mkey", false, nil,
			func(q *sq.SQ) error { return q.MkeyConfigure(nil, 0, attr) }},
		{"MkeyConfigure nil attr", "mkey_configure.attr", false, nil,
			func(q *sq.SQ) error { return q.MkeyConfigure(plainMk, 0, nil) }},
		{"MRList nil mkey", "wr_post.mr_list.mkey", false, nil,
			func(q *sq.SQ) error { return q.MRList(nil, mlx.IBV_ACCESS_LOCAL_WRITE, sges) }},
		{"MRInterleaved nil mkey", "wr_post.mr_interleaved.mkey", false, nil,
			func(q *sq.SQ) error { return q.MRInterleaved(nil, mlx.IBV_ACCESS_LOCAL_WRITE, 1, nil) }},
		{"SetMkeySigBlock nil", "sig.attr", false,
			func(q *sq.SQ) error { return q.MkeyConfigure(sigMk(), 1, attr) },
			func(q *sq.SQ) error { return q.SetMkeySigBlock(nil) }},
		{"SetMkeyCrypto nil", "crypto.attr", false,
			func(q *sq.SQ) error { return q.MkeyConfigure(cryptoMk, 1, attr) },
			func(q *sq.SQ) error { return q.SetMkeyCrypto(nil) }},
		{"ConfigureMkey nil mkey", "mkey_configure.mkey", false, nil,
			func(q *sq.SQ) error { return q.ConfigureMkey(nil, tmpl, sges) }},
		{"ConfigureMkey nil template", "mkey_configure.attr", false, nil,
			func(q *sq.SQ) error { return q.ConfigureMkey(plainMk, nil, sges) }},
		{"ConfigureMkey nil both", "mkey_configure.mkey", false, nil,
			func(q *sq.SQ) error { return q.ConfigureMkey(nil, nil, nil) }},
		{"SetDCAddr nil ah", "wr_post.dc_addr.ah", true,
			func(q *sq.SQ) error { return q.Send() },
			func(q *sq.SQ) error { return q.SetDCAddr(nil, 0x20, 0x1234) }},
		{"SetDCAddrStream nil ah", "wr_post.dc_addr_stream.ah", true,
			func(q *sq.SQ) error { return q.Send() },
			func(q *sq.SQ) error { return q.SetDCAddrStream(nil, 0x20, 0x1234, 1) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			q, mem := newSQ(t, 16, 0)
			if c.dci {
				q, mem = newDCI(t)
			}
			q.SetWRFlags(mlx.IBV_SEND_INLINE)
			if err := q.Start(); err != nil {
				t.Fatal(err)
			}
			if c.before != nil {
				if err := c.before(q); err != nil {
					t.Fatal(err)
				}
			}
			rejects(t, mem, c.rule, syscall.EINVAL, func() error { return c.call(q) })
			rejects(t, mem, c.rule, syscall.EINVAL, q.Complete)
		})
	}
}

// TestSetterCountIsUint8: mlx5dv_wr_mkey_configure's num_setters is a C
// uint8_t; the Go parameter is one too, so that no count is truncated
// (an int of 1<<32 + 1 was taken as 1).
func TestSetterCountIsUint8(t *testing.T) {
	m, ok := reflect.TypeOf((*sq.SQ)(nil)).MethodByName("MkeyConfigure")
	if !ok {
		t.Fatal("no MkeyConfigure")
	}
	if got := m.Type.In(2); got.Kind() != reflect.Uint8 {
		t.Fatalf("MkeyConfigure takes the setter count as %v, want uint8", got)
	}
	// 255 setters announced, one given: the configuration is not whole.
	q, mem := newSQ(t, 16, 0)
	q.SetWRFlags(mlx.IBV_SEND_INLINE)
	q.Start()
	mk := sq.NewMkey(0x4700, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 8)
	if err := q.MkeyConfigure(mk, 255, &mlx.MkeyConfAttr{}); err != nil {
		t.Fatal(err)
	}
	if err := q.SetMkeyAccessFlags(mlx.IBV_ACCESS_LOCAL_WRITE); err != nil {
		t.Fatal(err)
	}
	rejects(t, mem, "mkey_configure.num_setters", syscall.EINVAL, q.Complete)
}

// TestExtremeConfig: sizes whose arithmetic would overflow are refused by
// qmem.Plain, Memory.Check and sq.New (qmem.Plain(16, 0, hugeInt) passed
// both, and Complete then panicked).
func TestExtremeConfig(t *testing.T) {
	if mem, err := qmem.Plain(16, 0, hugeInt); err == nil {
		mem.Close()
		t.Fatal("qmem.Plain(16, 0, hugeInt) accepted")
	}
	mem, err := qmem.Plain(16, 0, 256)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	huge := *mem
	huge.BFSize = hugeInt
	rc := sq.QP{Type: mlx.QPRC}
	for name, c := range map[string]sq.Config{
		"BlueFlame 1<<62 in memory": {Mem: &huge, QP: rc, BF: sq.BlueFlame{UUARN: 1, Size: hugeInt}},
		"BlueFlame 1<<62":           {Mem: mem, QP: rc, BF: sq.BlueFlame{UUARN: 1, Size: hugeInt}},
		"negative BlueFlame":        {Mem: mem, QP: rc, BF: sq.BlueFlame{UUARN: 1, Size: -64}},
		"negative inline":           {Mem: mem, QP: sq.QP{Type: mlx.QPRC, MaxInlineData: -1}},
		"huge inline":               {Mem: mem, QP: sq.QP{Type: mlx.QPRC, MaxInlineData: hugeInt}},
		"negative SGEs":             {Mem: mem, QP: sq.QP{Type: mlx.QPRC, MaxSendSGE: -1}},
		"negative max_post":         {Mem: mem, QP: sq.QP{Type: mlx.QPRC, MaxPost: -1}},
		"negative streams":          {Mem: mem, QP: sq.QP{Type: mlx.QPDCI, Streams: true, LogNumConcurent: -1}},
		"too many streams":          {Mem: mem, QP: sq.QP{Type: mlx.QPDCI, Streams: true, LogNumConcurent: 64}},
		"memcpy above 2 GiB":        {Mem: mem, QP: sq.QP{Type: mlx.QPRC, MaxMemcpy: 1<<32 + 5}},
		// WQEs the control segment's 6-bit ds could not state.
		"inline over ds": {Mem: mem, QP: sq.QP{Type: mlx.QPRC, MaxInlineData: 1000}},
		"DCI inline":     {Mem: mem, QP: sq.QP{Type: mlx.QPDCI, MaxInlineData: 940}},
		"SGEs over ds":   {Mem: mem, QP: sq.QP{Type: mlx.QPRC, MaxSendSGE: 61}},
		"UMR over ds":    {Mem: mem, QP: sq.QP{Type: mlx.QPRC, MlxSendOps: mlx.MLX5DV_QP_EX_WITH_MR_LIST, MaxInlineData: 880}},
	} {
		if _, err := sq.New(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestLargestWQE: at the largest max_inline_data sq.New accepts (972 on RC), an RDMA
// write with that much inline data is 63 16-byte units, the most the
// control segment states.
func TestLargestWQE(t *testing.T) {
	mem, err := qmem.Plain(64, 0, 256)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	c := sq.Config{Mem: mem, QPN: qpn, QP: sq.QP{Type: mlx.QPRC, SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE, MaxInlineData: 972, MaxSendSGE: 1}}
	q, err := sq.New(c)
	if err != nil {
		t.Fatal(err)
	}
	q.SetWRFlags(mlx.IBV_SEND_INLINE)
	q.Start()
	if err := q.RDMAWrite(1, 2); err != nil {
		t.Fatal(err)
	}
	if err := q.SetInlineData(make([]byte, 972)); err != nil {
		t.Fatal(err)
	}
	if err := q.Complete(); err != nil {
		t.Fatal(err)
	}
	if ds := mem.SQ[7]; ds != 63 {
		t.Fatalf("ds %d, want 63", ds)
	}
	c.QP.MaxInlineData++
	if _, err := sq.New(c); err == nil {
		t.Fatal("max_inline_data 973 accepted")
	}
}

// hugeInt is far beyond any ring or register size, on 32- and 64-bit
// targets alike (the test package also builds for 386 and arm).
const hugeInt = math.MaxInt >> 1
