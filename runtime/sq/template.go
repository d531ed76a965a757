package sq

import (
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/runtime/internal/wrcheck"
)

// MkeyTemplate is a validated mkey configuration, applied with
// ConfigureMkey.
type MkeyTemplate = wrcheck.MkeyTemplate

// NewMkeyTemplate validates access flags and signature attributes (nil
// for none) once, for ConfigureMkey.
func NewMkeyTemplate(access mlx.AccessFlags, sig *mlx.SigBlockAttr) (*MkeyTemplate, error) {
	return wrcheck.NewMkeyTemplate(access, sig)
}

// ConfigureMkey configures mk with the template's access flags and
// signature and a list layout of sges. It writes exactly what
// MkeyConfigure (with no attributes) followed by SetMkeyAccessFlags,
// SetMkeyLayoutList and SetMkeySigBlock would, checked against the same
// rules, but with the template's attributes checked once and the
// configuration written in one call. When its common case does not hold
// (an mkey with crypto, a pending signature-error update, a state left
// unknown by a failed batch) it runs the checks of those calls one by one,
// all of them before it writes anything: a rejected call writes nothing.
// A nil mk or template is the rule error of a NULL mkey or attr.
func (q *SQ) ConfigureMkey(mk *Mkey, t *MkeyTemplate, sges []mlx.SGE) error {
	fn := mlx.FnWRMkeyConfigure
	length := listLength(sges)
	if mk == nil || t == nil || !q.fits(3) {
		// Not the common case: a NULL argument, or max_post near (the
		// UMR and up to two SET_PSVs).
		return q.configureChecked(mk, t, sges, length)
	}
	u := q.chk.ConfigureMkey(fn, q.wrFlags, mk, t, len(sges), length)
	if u == nil {
		return q.configureChecked(mk, t, sges, length)
	}
	if err := q.umrRing(fn, u); err != nil { // max_post holds it: fits(3)
		return err
	}
	q.umrStart(mk)
	q.access(t.Access)
	q.layoutList(sges, length)
	q.umrFinalize(u)
	return nil
}

// configureChecked is ConfigureMkey's general case: the checks of the
// calls one by one, and only then is the UMR written, as those calls
// would have written it.
func (q *SQ) configureChecked(mk *Mkey, t *MkeyTemplate, sges []mlx.SGE, length uint64) error {
	fn := mlx.FnWRMkeyConfigure
	if t == nil {
		// The template stands for the configuration's attributes: the
		// checks report a NULL mkey, else a NULL attr.
		_, err := q.chk.MkeyConfigure(fn, q.wrFlags, mk, 0, nil)
		return err
	}
	n := uint8(2)
	if t.Sig {
		n = 3
	}
	var conf mlx.MkeyConfAttr
	if _, err := q.chk.MkeyConfigure(fn, q.wrFlags, mk, n, &conf); err != nil {
		return err
	}
	if err := q.budget(fn, 1); err != nil {
		return err
	}
	if _, err := q.chk.MkeyAccess(mlx.FnWRSetMkeyAccessFlags, t.Access); err != nil {
		return err
	}
	last := mlx.FnWRSetMkeyLayoutList
	u, err := q.chk.MkeyLayout(last, len(sges), length, false)
	if err != nil {
		return err
	}
	if t.Sig {
		last = mlx.FnWRSetMkeySigBlock
		if u, err = q.chk.MkeySigBlock(last, t.SigAttr()); err != nil {
			return err
		}
	}
	if err := q.umrRoom(last, align64(16*len(sges)), true, u); err != nil {
		return err
	}
	q.umrStart(mk)
	q.access(t.Access)
	q.layoutList(sges, length)
	q.umrFinalize(u)
	return nil
}
