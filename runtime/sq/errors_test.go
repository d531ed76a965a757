package sq_test

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// ruleError returns err as a *RuleError, or fails.
func ruleError(t *testing.T, err error) *mlx.RuleError {
	t.Helper()
	var re *mlx.RuleError
	if !errors.As(err, &re) {
		t.Fatalf("got %v, want a *RuleError", err)
	}
	return re
}

// wantText checks that the error's text names every part.
func wantText(t *testing.T, err error, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%q does not name %q", err.Error(), p)
		}
	}
}

// TestErrorNamesWorkRequest: the second of three work requests breaks a
// limit; the error names that work request, the call, the field, the value
// and the limit, in its text and in its fields, and Complete reports the
// same.
func TestErrorNamesWorkRequest(t *testing.T) {
	q, mem := newSQ(t, 16, 0)
	q.Start()
	if err := q.RDMAWrite(0x200, 0x20000); err != nil {
		t.Fatal(err)
	}
	if err := q.SetSGE(0x100, 0x10000, 64); err != nil {
		t.Fatal(err)
	}
	if err := q.Send(); err != nil {
		t.Fatal(err)
	}
	re, err := rejected(t, mem, func() error { return q.SetInlineData(make([]byte, 400)) }) // max_inline_data is 316
	if re.WR != 1 || re.Func != mlx.FnWRSetInlineData || re.Field != "length" || re.Test != mlx.TestMax ||
		re.Value != 400 || re.Limit != 316 || re.LimitName != "max_inline_data" || re.Rule != "ibv_wr.inline_size" ||
		!errors.Is(err, syscall.ENOMEM) {
		t.Fatalf("error fields %+v", *re)
	}
	wantText(t, err, "work request 1", "ibv_wr_set_inline_data", "length 400", "limit 316", "max_inline_data", "ibv_wr.inline_size")
	q.RDMAWrite(0x200, 0x20000) // latched: the third work request is refused with the same error
	if err := q.Complete(); ruleError(t, err).WR != 1 || ruleError(t, err).Field != "length" {
		t.Fatalf("Complete reports %v", err)
	}
}

// TestErrorSGECount: an SGE list over max_send_sge names num_sge and the
// limit, at the third work request.
func TestErrorSGECount(t *testing.T) {
	q, mem := newSQ(t, 16, 0)
	q.Start()
	for range 2 {
		q.Send()
		q.SetSGE(0x100, 0x10000, 64)
	}
	q.RDMAWrite(0x200, 0x20000)
	re, err := rejected(t, mem, func() error { return q.SetSGEList(make([]mlx.SGE, 9)) })
	if re.WR != 2 || re.Field != "num_sge" || re.Value != 9 || re.Limit != 8 || re.LimitName != "max_send_sge" {
		t.Fatalf("error fields %+v", *re)
	}
	wantText(t, err, "work request 2", "ibv_wr_set_sge_list", "num_sge 9", "limit 8 (max_send_sge)")
}

// TestErrorAccessFlags: RELAXED_ORDERING is a member of enum
// ibv_access_flags but libmlx5 refuses it for an mkey; the error states
// the rule applied (the four flags accepted) and names the refused bit.
func TestErrorAccessFlags(t *testing.T) {
	q, mem := newSQ(t, 16, 0)
	mk := sq.NewMkey(0x12300, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT, 4)
	q.SetWRFlags(mlx.IBV_SEND_INLINE)
	q.Start()
	q.Send()
	q.SetSGE(0x100, 0x10000, 64)
	if err := q.MkeyConfigure(mk, 2, &mlx.MkeyConfAttr{}); err != nil {
		t.Fatal(err)
	}
	re, err := rejected(t, mem, func() error {
		return q.SetMkeyAccessFlags(mlx.IBV_ACCESS_LOCAL_WRITE | mlx.IBV_ACCESS_RELAXED_ORDERING)
	})
	allowed := uint64(mlx.IBV_ACCESS_LOCAL_WRITE | mlx.IBV_ACCESS_REMOTE_WRITE | mlx.IBV_ACCESS_REMOTE_READ | mlx.IBV_ACCESS_REMOTE_ATOMIC)
	if re.WR != 1 || re.Func != mlx.FnWRSetMkeyAccessFlags || re.Field != "access_flags" || re.Test != mlx.TestBits ||
		re.Limit != allowed || re.Value&^re.Limit != uint64(mlx.IBV_ACCESS_RELAXED_ORDERING) || !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("error fields %+v", *re)
	}
	wantText(t, err, "work request 1", "mlx5dv_wr_set_mkey_access_flags", "has 0x100000 (IBV_ACCESS_RELAXED_ORDERING) outside",
		"IBV_ACCESS_LOCAL_WRITE|IBV_ACCESS_REMOTE_WRITE|IBV_ACCESS_REMOTE_READ|IBV_ACCESS_REMOTE_ATOMIC",
		"Only IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_REMOTE_WRITE, IBV_ACCESS_REMOTE_READ and IBV_ACCESS_REMOTE_ATOMIC are accepted")
	if strings.Contains(err.Error(), "OR of members of enum ibv_access_flags") {
		t.Errorf("%q states a rule RELAXED_ORDERING keeps", err)
	}
}

// TestErrorSendOp: a builder the QP was not created for names the
// send_ops_flags bit it lacks.
func TestErrorSendOp(t *testing.T) {
	mem, err := qmem.Plain(8, 0, 256)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	q, err := sq.New(sq.Config{Mem: mem, QPN: qpn, QP: sq.QP{Type: mlx.QPRC,
		SendOps: mlx.IBV_QP_EX_WITH_SEND | mlx.IBV_QP_EX_WITH_RDMA_WRITE, MaxInlineData: 64, MaxSendSGE: 2}})
	if err != nil {
		t.Fatal(err)
	}
	q.Start()
	re, err := rejected(t, mem, func() error { return q.RDMARead(0x200, 0x20000) })
	if re.WR != 0 || re.Field != "send_ops_flags" || re.Test != mlx.TestNeedBits || re.Limit != uint64(mlx.IBV_QP_EX_WITH_RDMA_READ) {
		t.Fatalf("error fields %+v", *re)
	}
	wantText(t, err, "work request 0", "ibv_wr_rdma_read", "lacks 0x10 (IBV_QP_EX_WITH_RDMA_READ)")
}

// TestErrorValidator: a validator called on its own names the struct,
// the field and the value, and no work request.
func TestErrorValidator(t *testing.T) {
	crc := mlx.SigCRC{Type: mlx.MLX5DV_SIG_CRC_TYPE_CRC32, Seed: 7}
	err := crc.Validate()
	re := ruleError(t, err)
	if re.WR != -1 || re.Struct != "mlx5dv_sig_crc" || re.Field != "seed" || re.Value != 7 || re.Test != mlx.TestOneOf {
		t.Fatalf("error fields %+v", *re)
	}
	wantText(t, err, "mlx5dv_sig_crc.seed 0x7 is none of the values allowed")
	if strings.Contains(err.Error(), "work request") {
		t.Errorf("%q names a work request", err)
	}
	err = mlx.ValidateArgsWRSetMkeyAccessFlags(mlx.IBV_ACCESS_MW_BIND)
	wantText(t, err, "mlx5dv_wr_set_mkey_access_flags: access_flags 0x10 (IBV_ACCESS_MW_BIND) has 0x10 (IBV_ACCESS_MW_BIND) outside")
}

// TestRejectNoAllocations: a rejected call, and the calls after it that
// return the latched error, allocate nothing.
func TestRejectNoAllocations(t *testing.T) {
	q, _ := newSQ(t, 64, 0)
	mk := sq.NewMkey(0x12300, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 4)
	crc := mlx.SigCRC{Type: mlx.MLX5DV_SIG_CRC_TYPE_CRC32, Seed: 7} // a bad seed
	wire := mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_CRC, BlockSize: mlx.MLX5DV_BLOCK_SIZE_512}
	wire.SetSigCRC(&crc)
	sig := mlx.SigBlockAttr{Wire: &wire, CheckMask: 0xff}
	conf := &mlx.MkeyConfAttr{}
	big := make([]byte, 1000)
	cases := []struct {
		name string
		run  func() error
	}{
		{"inline_size", func() error { q.Send(); return q.SetInlineData(big) }},
		{"sge_count", func() error { q.Send(); return q.SetSGEList(make([]mlx.SGE, 9)) }},
		{"access_flags", func() error {
			q.MkeyConfigure(mk, 1, conf)
			return q.SetMkeyAccessFlags(mlx.IBV_ACCESS_RELAXED_ORDERING)
		}},
		{"sig_block validator", func() error { q.MkeyConfigure(mk, 1, conf); return q.SetMkeySigBlock(&sig) }},
		{"requires_data", func() error { q.Send(); return q.Send() }},
		{"outside a batch", func() error { q.Complete(); return q.Send() }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run := func() {
				q.SetWRFlags(mlx.IBV_SEND_INLINE)
				q.Start()
				q.RDMAWrite(1, 2)
				q.SetSGE(3, 4, 5)
				if c.run() == nil {
					t.Fatal("accepted")
				}
				q.Send() // latched
				q.Abort()
			}
			run()
			if n := testing.AllocsPerRun(200, run); n != 0 {
				t.Errorf("%v allocations per rejected batch", n)
			}
		})
	}
}

// TestCryptoMkeyBeforeConfiguration: the writer does not look lkeys up,
// so a data work request using a CRYPTO mkey that was never configured is
// posted as written; the rule says the device reports it (an error
// completion), not the writer.
func TestCryptoMkeyBeforeConfiguration(t *testing.T) {
	q, _ := newSQ(t, 16, 0)
	mk := sq.NewMkey(0x12300, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO, 4)
	q.Start()
	q.RDMAWrite(0x200, 0x20000)
	if err := q.SetSGE(mk.LKey, 0, 512); err != nil {
		t.Fatal(err)
	}
	if err := q.Complete(); err != nil || q.CurPost() != 1 {
		t.Fatalf("complete: %v, producer index %d", err, q.CurPost())
	}
	for _, r := range mlx5rules.Rules {
		if r.ID == "mkey_configure.crypto_required" {
			if r.Kind != "use" || r.Chain != -1 || r.Errno != 0 || !strings.Contains(r.Libmlx5, "error completion") {
				t.Fatalf("rule %+v: want a use rule the device reports", r)
			}
			return
		}
	}
	t.Fatal("no rule mkey_configure.crypto_required")
}

// TestErrorIndexAfterUMR: the SET_PSV work requests a signature
// configuration brings are not counted: the work request after two
// configurations (one by calls, one by template) is work request 2.
func TestErrorIndexAfterUMR(t *testing.T) {
	q, _ := newSQ(t, 64, 0)
	mk := sq.NewMkey(0x12300, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 4)
	mk2 := sq.NewMkey(0x45600, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 4)
	mk2.ErrCountUpdated = false // the template path takes an mkey without a pending error count
	sig := mlx.SigBlockAttr{Mem: crcDomain(mlx.MLX5DV_SIG_CRC_TYPE_CRC32C, 0xffffffff, mlx.MLX5DV_BLOCK_SIZE_512),
		Wire: crcDomain(mlx.MLX5DV_SIG_CRC_TYPE_CRC32C, 0xffffffff, mlx.MLX5DV_BLOCK_SIZE_512), CheckMask: 0xff}
	tmpl, err := sq.NewMkeyTemplate(mlx.IBV_ACCESS_LOCAL_WRITE, &sig)
	if err != nil {
		t.Fatal(err)
	}
	sges := []mlx.SGE{{Addr: 0x10000, Length: 512, LKey: 0x100}}
	q.SetWRFlags(mlx.IBV_SEND_INLINE)
	q.Start()
	steps := []error{
		q.MkeyConfigure(mk, 3, &mlx.MkeyConfAttr{}),
		q.SetMkeyAccessFlags(mlx.IBV_ACCESS_LOCAL_WRITE),
		q.SetMkeyLayoutList(sges),
		q.SetMkeySigBlock(&sig),
		q.ConfigureMkey(mk2, tmpl, sges),
		q.Send(),
	}
	for i, err := range steps {
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	err = q.SetInlineData(make([]byte, 400))
	if re := ruleError(t, err); re.WR != 2 {
		t.Fatalf("work request %d, want 2: %v", re.WR, err)
	}
	if q.Abort(); q.CurPost() != 0 {
		t.Fatal("an aborted batch posted")
	}
}
