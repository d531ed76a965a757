package wrcheck_test

import (
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"go.yaml.in/yaml/v3"

	"github.com/mlx5gen/mlx5gen/gen/spec"
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
	"github.com/mlx5gen/mlx5gen/runtime/internal/ruletest"
	"github.com/mlx5gen/mlx5gen/runtime/internal/wrcheck"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// TestRules runs every enforced rule's examples (spec/api): the good one
// must pass the checks, the bad one must fail on this very rule with its
// errno. The sq_room rule is the writer's: it counts the work requests
// and the ring's room (runtime/sq's TestRulesEveryEntryPoint runs it).
func TestRules(t *testing.T) {
	res := ruletest.Load(t)
	n := 0
	for _, r := range ruletest.Enforced(res) {
		if r.Check.Chain == "sq_room" {
			continue
		}
		n++
		r := r
		t.Run(r.ID, func(t *testing.T) {
			for _, which := range []string{"good", "bad"} {
				t.Run(which, func(t *testing.T) {
					node := r.Tests.Good
					if which == "bad" {
						node = r.Tests.Bad
					}
					x := &example{t: t, v: ruletest.Values{T: t, Res: res}, rule: r}
					err := x.run(&node)
					if which == "good" {
						if err != nil {
							t.Fatalf("the good example fails: %v", err)
						}
						return
					}
					var re *mlx.RuleError
					if !errors.As(err, &re) {
						t.Fatalf("the bad example gives %v, want a *RuleError", err)
					}
					if re.Rule != r.ID {
						t.Fatalf("the bad example breaks rule %s (%v), not %s", re.Rule, err, r.ID)
					}
					if want := ruletest.Errno(r.Errno); !errors.Is(err, want) {
						t.Fatalf("errno %v, want %v", re.Errno, want)
					}
					// The error says what was wrong: the field or property
					// and, inside a batch, which work request.
					if re.Field == "" && r.Check.Chain != "in_batch" {
						t.Errorf("%v names no field", err)
					}
					if c := r.Check.Chain; c != "" && c != "in_batch" && re.WR < 0 && mlx5rules.Funcs[re.Func].Kind == mlx5rules.KindBuilder {
						t.Errorf("%v names no work request", err)
					}
					if re.Field != "" && !strings.Contains(err.Error(), re.Field) {
						t.Errorf("%q does not name the field %s", err, re.Field)
					}
				})
			}
		})
	}
	if n < 50 {
		t.Errorf("only %d rules have tests", n)
	}
}

// example runs one example of a rule.
type example struct {
	t    *testing.T
	v    ruletest.Values
	rule *spec.Rule
}

func (x *example) run(n *yaml.Node) error {
	c := x.rule.Check
	switch {
	case c.Struct != "":
		v, ok := mlx.NewMirror(c.Struct)
		if !ok {
			x.t.Fatalf("no mirror for struct %s", c.Struct)
		}
		x.v.Fill(reflect.ValueOf(v).Elem(), c.Struct, n)
		return v.(interface{ Validate() error }).Validate()
	case c.Func != "":
		fn := x.fn(c.Func)
		validate, ok := mlx.ArgValidators[fn]
		if !ok {
			x.t.Fatalf("no argument validator for %s", c.Func)
		}
		args := map[string]any{}
		var dummy [8]byte
		for k, v := range x.v.Mapping(n) {
			if v.Kind == yaml.MappingNode {
				args[k] = unsafe.Pointer(&dummy) // a struct or object: any non-NULL pointer
				continue
			}
			args[k] = x.v.Value(v)
		}
		return validate(args)
	}
	return x.chain(n)
}

// chain runs a chain example: tests.qp and a list of calls.
func (x *example) chain(n *yaml.Node) error {
	qp, mkeys := x.v.QP(&x.rule.Tests.QP)
	wqp := wrcheck.QP(*qp) // runtime/sq's QP, as sq.New converts it
	c := wrcheck.New(&wqp)
	d := &driver{x: x, c: c, mkeys: mkeys}
	if n.Kind != yaml.SequenceNode {
		x.t.Fatalf("line %d: a chain example is a list of calls", n.Line)
	}
	for _, call := range n.Content {
		if err := d.call(call); err != nil {
			return err
		}
	}
	return nil // a call that breaks a rule returns the error itself
}

// driver replays calls on a chain.
type driver struct {
	x       *example
	c       *wrcheck.Chain
	mkeys   map[string]*sq.Mkey
	wrFlags uint32
}

func (d *driver) call(n *yaml.Node) error {
	x := d.x
	a := &callArgs{x: x, name: n.Value, line: n.Line, args: map[string]*yaml.Node{}}
	if n.Kind == yaml.MappingNode {
		a.name = n.Content[0].Value
		if v := n.Content[1]; v.Kind == yaml.MappingNode {
			a.args = x.v.Mapping(v)
		} else {
			a.args["value"] = v
		}
	}
	switch a.name {
	case "ibv_wr_start":
		return d.c.Start()
	case "ibv_wr_complete":
		_, err := d.c.Complete(mlx.FnWRComplete)
		return err
	case "ibv_wr_abort":
		d.c.Abort()
		return nil
	case "ibv_qp_ex.wr_flags":
		f := uint32(x.v.Value(a.args["value"]))
		if err := d.c.WRFlags(mlx.FnQPToQPEx, mlx.SendFlags(f)); err != nil {
			return err // refused flags are not set
		}
		d.wrFlags = f
		return nil
	case "ibv_qp_ex.wr_id":
		return nil
	}
	fn := x.fn(a.name)
	if mlx5rules.Funcs[fn].Kind == mlx5rules.KindBuilder {
		return d.builder(fn, a)
	}
	return d.setter(fn, a)
}

// callArgs are the arguments of a call of an example.
type callArgs struct {
	x    *example
	name string
	line int
	args map[string]*yaml.Node
}

// arg reads a number argument, def when absent.
func (a *callArgs) arg(k string, def uint64) uint64 {
	if v := a.args[k]; v != nil {
		return a.x.v.Value(v)
	}
	return def
}

// count returns the elements of a list argument, or nil and the count
// given by the count argument (or by a number in place of the list).
func (a *callArgs) count(list, num string) (int, []*yaml.Node) {
	if v := a.args[list]; v != nil {
		if v.Kind == yaml.SequenceNode {
			return len(v.Content), v.Content
		}
		return int(a.x.v.Value(v)), nil
	}
	return int(a.arg(num, 0)), nil
}

// mkey resolves the mkey argument, a name from qp.mkeys, as the checker
// sees it: sq.Mkey mirrors wrcheck.Mkey field for field (runtime/sq's
// TestMkeyMirrorsChecker), and runtime/sq converts it the same way.
func (d *driver) mkey(a *callArgs) *wrcheck.Mkey {
	v := a.args["mkey"]
	if v == nil || d.mkeys[v.Value] == nil {
		a.x.t.Fatalf("line %d: %s needs mkey: <a name from qp.mkeys>", a.line, a.name)
	}
	return (*wrcheck.Mkey)(unsafe.Pointer(d.mkeys[v.Value]))
}

// builder calls builder fn.
func (d *driver) builder(fn mlx.Func, a *callArgs) error {
	x := d.x
	switch a.name {
	case "mlx5dv_wr_mkey_configure":
		attr := &mlx.MkeyConfAttr{}
		if v := a.args["attr"]; v != nil {
			x.v.Fill(reflect.ValueOf(attr).Elem(), "attr", v)
		}
		return errOf(d.c.MkeyConfigure(fn, d.wrFlags, d.mkey(a), uint8(a.arg("num_setters", 0)), attr))
	case "mlx5dv_wr_mr_list":
		k, list := a.count("sge", "num_sges")
		return errOf(d.c.MR(fn, d.wrFlags, d.mkey(a), uint32(a.arg("access_flags", 0)), x.listLayout(k, list)))
	case "mlx5dv_wr_mr_interleaved":
		k, list := a.count("data", "num_interleaved")
		return errOf(d.c.MR(fn, d.wrFlags, d.mkey(a), uint32(a.arg("access_flags", 0)), x.interleavedLayout(k, list, a.arg("repeat_count", 1))))
	case "mlx5dv_wr_memcpy":
		return d.c.Memcpy(fn, d.wrFlags, a.arg("length", 64))
	case "mlx5dv_wr_raw_wqe":
		wqe := []byte{0, 0, 0, 8, 0, 0x12, 0x34, 1, 0, 0, 0, 8, 0, 0, 0, 0}
		if v := a.args["wqe_hex"]; v != nil {
			var err error
			if wqe, err = hex.DecodeString(v.Value); err != nil {
				x.t.Fatalf("line %d: wqe_hex: %v", v.Line, err)
			}
		}
		return d.c.RawWQE(fn, d.wrFlags, wqe)
	}
	return d.c.Builder(fn, d.wrFlags)
}

// setter calls setter fn.
func (d *driver) setter(fn mlx.Func, a *callArgs) error {
	x := d.x
	switch mlx5rules.Funcs[fn].Group {
	case mlx5rules.GroupData:
		// Data's checks, then the lengths', as runtime/sq calls them.
		var err error
		switch a.name {
		case "ibv_wr_set_sge":
			if _, err = d.c.Data(fn, 1, 0); err == nil {
				err = d.c.SGE(fn, uint32(a.arg("length", 64)))
			}
		case "ibv_wr_set_sge_list":
			k, list := a.count("sg_list", "num_sge")
			sges := make([]mlx.SGE, k)
			for i, e := range list {
				sges[i].Length = uint32(x.v.Value(x.v.Mapping(e)["length"]))
			}
			if _, err = d.c.Data(fn, k, 0); err == nil {
				err = d.c.SGEList(fn, sges)
			}
		case "ibv_wr_set_inline_data":
			n := int(a.arg("length", 0))
			if _, err = d.c.Data(fn, 0, n); err == nil {
				err = d.c.Inline(fn, n)
			}
		case "ibv_wr_set_inline_data_list":
			_, list := a.count("buf_list", "num_buf")
			n := int(x.v.Sum(list, "length", a.arg("length", 0)))
			if _, err = d.c.Data(fn, 0, n); err == nil {
				err = d.c.Inline(fn, n)
			}
		default:
			_, err = d.c.Data(fn, 1, 0)
		}
		return err
	case mlx5rules.GroupDCAddr:
		stream := -1
		if v := a.args["stream_id"]; v != nil {
			stream = int(x.v.Value(v))
		}
		var ah [64]byte
		return errOf(d.c.DCAddr(fn, unsafe.Pointer(&ah), stream))
	case mlx5rules.GroupUDAddr, mlx5rules.GroupXRCSRQN:
		return errOf(d.c.QPSetter(fn))
	case mlx5rules.GroupAccess:
		return errOf(d.c.MkeyAccess(fn, uint32(a.arg("access_flags", 0))))
	case mlx5rules.GroupLayout:
		if a.name == "mlx5dv_wr_set_mkey_layout_list" {
			k, list := a.count("sge", "num_sges")
			return errOf(d.c.MkeyLayout(fn, x.listLayout(k, list)))
		}
		k, list := a.count("data", "num_interleaved")
		return errOf(d.c.MkeyLayout(fn, x.interleavedLayout(k, list, a.arg("repeat_count", 1))))
	case mlx5rules.GroupSignature:
		attr := &mlx.SigBlockAttr{}
		if v := a.args["attr"]; v != nil {
			x.v.Fill(reflect.ValueOf(attr).Elem(), "attr", v)
		}
		return errOf(d.c.MkeySigBlock(fn, attr))
	case mlx5rules.GroupCrypto:
		attr := &mlx.CryptoAttr{}
		if v := a.args["attr"]; v != nil {
			x.v.Fill(reflect.ValueOf(attr).Elem(), "attr", v)
		}
		return errOf(d.c.MkeyCrypto(fn, attr))
	}
	return fmt.Errorf("the test driver does not know how to call %s", a.name)
}

// errOf is the error of a call's answer.
func errOf[T any](_ T, err error) error { return err }

// fn finds a function by its C name.
func (x *example) fn(name string) mlx.Func {
	fn, ok := ruletest.Fn(name)
	if !ok {
		x.t.Fatalf("no function %s in generated/mlx5dv", name)
	}
	return fn
}

// listLayout is the layout of a list of k entries: the listed entries'
// lengths (the first over wrcheck.MaxKLMLength named), or 4096 bytes each
// when the call lists none.
func (x *example) listLayout(k int, list []*yaml.Node) wrcheck.Layout {
	if list == nil {
		return wrcheck.Layout{Entries: k, Length: uint64(k) * 4096}
	}
	sges := make([]mlx.SGE, len(list))
	for i, e := range list {
		if v := x.v.Mapping(e)["length"]; v != nil {
			sges[i].Length = uint32(x.v.Value(v))
		}
	}
	l := wrcheck.ListLayout(sges)
	l.Entries = k
	return l
}

// interleavedLayout is the layout of k interleaved entries repeated
// repeat times (512 bytes each when the call lists none).
func (x *example) interleavedLayout(k int, list []*yaml.Node, repeat uint64) wrcheck.Layout {
	return wrcheck.Layout{Entries: k, Length: repeat * x.v.Sum(list, "bytes_count", uint64(k)*512), Interleaved: true}
}
