package wrcheck

import (
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
)

// what is what was wrong with a call: the field or property, the value
// given and the limit it broke, for the RuleError.
type what struct {
	field     string
	test      mlx.Test
	value     uint64
	limit     uint64
	limitName string
	names     func(uint64) string
}

// The names of the values the errors show.
func sendOpNames(v uint64) string    { return mlx.IBVQPCreateSendOpsFlags(v).String() }
func mlxSendOpNames(v uint64) string { return mlx.QPCreateSendOpsFlags(v).String() }
func sendFlagNames(v uint64) string  { return mlx.SendFlags(v).String() }
func qpTypeNames(v uint64) string    { return mlx.QPType(v).String() }
func mkeyFlagNames(v uint64) string  { return mlx.MkeyInitAttrFlags(v).String() }
func funcNames(v uint64) string      { return mlx.Func(v).String() }
func cryptoOrderNames(v uint64) string {
	return mlx.SignatureCryptoOrder(v).String()
}

// above is a value above a limit of the QP or mkey.
func above(field string, v, limit uint64, limitName string) what {
	return what{field: field, test: mlx.TestMax, value: v, limit: limit, limitName: limitName}
}

// wrIndex is the index in the batch of the work request the failing call
// belongs to, as the user counts them (builder calls; the SET_PSV work
// requests a UMR brings are not counted): the open one, or the one a
// builder is opening; -1 for a setter when none is open.
func (c *Chain) wrIndex(fn mlx.Func) int {
	switch {
	case c.wr.isOpen():
		return c.wrs - 1
	case mlx5rules.Funcs[fn].Kind == mlx5rules.KindSetter:
		return -1
	}
	return c.wrs
}

// fail latches the error of check ck in function fn, saying what was
// wrong. The error lives in the chain: reporting does not allocate.
func (c *Chain) fail(ck mlx5rules.ChainCheck, fn mlx.Func, w what) error {
	if c.err != nil {
		return c.err
	}
	e := &c.errv
	*e = *mlx5rules.ChainError(ck, fn)
	c.fill(e, fn, w)
	c.err = e
	c.notReady()
	return e
}

func (c *Chain) fill(e *mlx.RuleError, fn mlx.Func, w what) {
	e.WR = c.wrIndex(fn)
	e.Field, e.Test, e.Value, e.Limit, e.LimitName, e.Names = w.field, w.test, w.value, w.limit, w.limitName, w.names
}

// outside returns the error of a call outside a batch (in_batch): it
// latches nothing, so it does not touch the error the last batch
// returned.
func (c *Chain) outside(fn mlx.Func) error {
	e := &c.outv
	*e = *mlx5rules.ChainError(mlx5rules.ChainInBatch, fn)
	return e
}

// latchRule latches a validator's error, filled in c.scratch, for the
// call fn.
func (c *Chain) latchRule(fn mlx.Func) error {
	return c.LatchRule(fn, &c.scratch)
}

// LatchRule fails the batch with e, a violation a validator's ...Into
// form reported for the call fn, and returns the chain's copy of it, with
// the work request's index filled in. It does not allocate.
func (c *Chain) LatchRule(fn mlx.Func, e *mlx.RuleError) error {
	if c.err != nil {
		return c.err
	}
	c.errv = *e
	c.errv.Func, c.errv.WR = fn, c.wrIndex(fn)
	c.err = &c.errv
	c.notReady()
	return c.err
}
