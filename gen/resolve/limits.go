package resolve

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mlx5gen/mlx5gen/gen/model"
	"github.com/mlx5gen/mlx5gen/gen/spec"
)

// checkSigned reports whether the field or parameter a check is on is a
// signed integer.
func checkSigned(a *model.ArgCheck) bool {
	switch {
	case a.Param != nil:
		return a.Param.Kind == model.ParamInt && a.Param.Int.Signed
	case a.Member != nil:
		return a.Member.Kind == model.MInt && a.Member.Int.Signed
	case a.Field != nil:
		return a.Field.Kind == model.MInt && a.Field.Int.Signed
	}
	return false
}

// specNegative reports whether a spec value is negative: a negative
// number, or a constant of the header with a negative value.
func (b *builder) specNegative(s string) bool {
	t := strings.ReplaceAll(s, "_", "")
	if _, err := strconv.ParseUint(t, 0, 64); err == nil {
		return false
	}
	if n, err := strconv.ParseInt(t, 0, 64); err == nil {
		return n < 0
	}
	if k := b.consts[s]; k != nil {
		return k.Value.Signed && int64(k.Value.Bits) < 0
	}
	if c := b.c.Constant(s); c != nil {
		return c.ConstValue().Negative()
	}
	return false
}

// inType refuses a limit of a check (max:, one_of:) that a value of the
// field's or parameter's type cannot take: such a limit would wrap in the
// generated comparison (max: -1 on a uint64 becomes 0xffffffffffffffff
// and the rule never fires).
func (b *builder) inType(c *spec.Check, a *model.ArgCheck, key, s string, v uint64, bits int, what string) {
	if bits <= 0 || bits > 64 {
		return
	}
	signed := checkSigned(a)
	neg := b.specNegative(s)
	var lo, hi string
	ok := true
	if signed {
		lo, hi = strconv.FormatInt(-1<<(bits-1), 10), strconv.FormatInt(1<<(bits-1)-1, 10)
		if neg {
			ok = bits >= 64 || int64(v) >= -1<<(bits-1)
		} else {
			ok = v <= 1<<(bits-1)-1
		}
	} else {
		lo, hi = "0", strconv.FormatUint(1<<(bits-1)|(1<<(bits-1)-1), 10)
		ok = !neg && (bits >= 64 || v>>uint(bits) == 0)
	}
	if ok {
		return
	}
	name := c.Field
	if name == "" {
		name = c.Param
	}
	typ := fmt.Sprintf("uint%d", bits)
	if signed {
		typ = fmt.Sprintf("int%d", bits)
	}
	if bits == 1 {
		typ = "bool"
	}
	b.errorf(c.Pos, "%s: %s %s is outside the type of %s (%s: %s to %s)", what, key, s, name, typ, lo, hi)
}
