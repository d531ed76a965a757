package sq_test

import (
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// TestBudgetCountsPSVs: the writer counts max_post itself, and a
// signature configuration's work requests are its UMR and the SET_PSV of
// each domain, whichever entry point built it. With one work request in
// the batch, a configuration with both domains fits max_post 4 and not 3;
// the rejection names the configuration (work request 1), and the
// finishing call writes nothing.
func TestBudgetCountsPSVs(t *testing.T) {
	dif := mlx.SigT10DIF{BG: 0xffff, AppTag: 1, RefTag: 2}
	dom := mlx.SigBlockDomain{SigType: mlx.MLX5DV_SIG_TYPE_T10DIF, BlockSize: mlx.MLX5DV_BLOCK_SIZE_512}
	dom.SetSigDif(&dif)
	sig := mlx.SigBlockAttr{Mem: &dom, Wire: &dom, CheckMask: 0xff}
	sges := []mlx.SGE{{Addr: 1, Length: 512, LKey: 2}}
	tmpl, err := sq.NewMkeyTemplate(mlx.IBV_ACCESS_LOCAL_WRITE, &sig)
	if err != nil {
		t.Fatal(err)
	}
	// Each form: the calls before the one that finishes the configuration,
	// and that one.
	type form struct {
		begin, finish func(q *sq.SQ, mk *sq.Mkey) error
	}
	forms := map[string]form{
		"calls": {func(q *sq.SQ, mk *sq.Mkey) error {
			if err := q.MkeyConfigure(mk, 3, &mlx.MkeyConfAttr{}); err != nil {
				return err
			}
			if err := q.SetMkeyAccessFlags(mlx.IBV_ACCESS_LOCAL_WRITE); err != nil {
				return err
			}
			return q.SetMkeyLayoutList(sges)
		}, func(q *sq.SQ, mk *sq.Mkey) error { return q.SetMkeySigBlock(&sig) }},
		"template": {func(*sq.SQ, *sq.Mkey) error { return nil },
			func(q *sq.SQ, mk *sq.Mkey) error { return q.ConfigureMkey(mk, tmpl, sges) }},
	}
	for name, f := range forms {
		for _, maxPost := range []int{3, 4} {
			q, mem := newSQ(t, 64, maxPost)
			mk := sq.NewMkey(0x12300, mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT|mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE, 4)
			q.SetWRFlags(mlx.IBV_SEND_INLINE)
			q.Start()
			if err := q.Send(); err != nil {
				t.Fatal(err)
			}
			if err := q.SetSGE(1, 2, 3); err != nil {
				t.Fatal(err)
			}
			if err := f.begin(q, mk); err != nil {
				t.Fatal(err)
			}
			if maxPost == 4 {
				if err := f.finish(q, mk); err != nil {
					t.Fatalf("%s, max_post 4: %v", name, err)
				}
				if err := q.Complete(); err != nil || q.Head() != 4 {
					t.Fatalf("%s, max_post 4: %v, %d work requests posted, want 4", name, err, q.Head())
				}
				continue
			}
			re, err := rejected(t, mem, func() error { return f.finish(q, mk) })
			if re.Rule != "ibv_wr.sq_room" || re.WR != 1 || re.Value != 4 || re.Limit != 3 {
				t.Fatalf("%s, max_post 3: %v (work request %d, %d of %d)", name, err, re.WR, re.Value, re.Limit)
			}
			if err := q.Complete(); err == nil || q.Head() != 0 {
				t.Fatalf("%s: the batch posted %d work requests (%v)", name, q.Head(), err)
			}
		}
	}
}
