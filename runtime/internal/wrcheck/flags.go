package wrcheck

import (
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
)

// SendFlags are the members of enum ibv_send_flags: the only bits
// ibv_qp_ex.wr_flags may have (rule ibv_wr.flags).
const SendFlags = mlx.IBV_SEND_FENCE | mlx.IBV_SEND_SIGNALED | mlx.IBV_SEND_SOLICITED | mlx.IBV_SEND_INLINE | mlx.IBV_SEND_IP_CSUM

// WRFlags checks a value the caller sets ibv_qp_ex.wr_flags to (fn is
// the call that stands for setting it): only bits of enum ibv_send_flags
// (check send_flags). Inside a batch the failure is latched like any
// other, so the batch fails at Complete even if the caller drops the
// error: its work requests would carry flags the caller never set.
// Outside a batch there is nothing to fail, and the error is the
// caller's alone.
func (c *Chain) WRFlags(fn mlx.Func, f mlx.SendFlags) error {
	if f&^SendFlags == 0 {
		return nil
	}
	w := what{field: "wr_flags", test: mlx.TestBits, value: uint64(f), limit: uint64(SendFlags), names: sendFlagNames}
	if c.open {
		return c.fail(mlx5rules.ChainSendFlags, fn, w)
	}
	// A new error, not the chain's: setting flags between batches is
	// rare, and the error must outlive the next batch's.
	e := new(mlx.RuleError)
	*e = *mlx5rules.ChainError(mlx5rules.ChainSendFlags, fn)
	c.fill(e, fn, w)
	e.WR = -1
	return e
}
