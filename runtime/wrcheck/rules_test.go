package wrcheck_test

import (
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"go.yaml.in/yaml/v3"

	"github.com/mlx5gen/mlx5gen/gen"
	"github.com/mlx5gen/mlx5gen/gen/model"
	"github.com/mlx5gen/mlx5gen/gen/spec"
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
	"github.com/mlx5gen/mlx5gen/runtime/wrcheck"
	specfiles "github.com/mlx5gen/mlx5gen/spec"
)

// The release generated/mlx5dv is generated from.
const committed = "44.0"

var (
	genOnce sync.Once
	genRes  *gen.Result
	genErr  error
)

func generated(t testing.TB) *gen.Result {
	t.Helper()
	genOnce.Do(func() {
		root, err := rdmacore.IncludeRoot(".", committed)
		if err != nil {
			genErr = err
			return
		}
		genRes, genErr = gen.Generate(gen.Config{IncludeRoot: root, Spec: specfiles.FS})
	})
	if genErr != nil {
		t.Fatal(genErr)
	}
	return genRes
}

// TestRules runs every enforced rule's examples (spec/api): the good one
// must pass the checks, the bad one must fail on this very rule with its
// errno.
func TestRules(t *testing.T) {
	res := generated(t)
	n := 0
	for _, r := range res.Spec.Rules {
		if r.Tests == nil || !r.Gate.Includes(committed) {
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
					x := &example{t: t, res: res, rule: r}
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
					if want := errnoOf(r.Errno); !errors.Is(err, want) {
						t.Fatalf("errno %v, want %v", re.Errno, want)
					}
					// The error says what was wrong: the field or property
					// and, inside a batch, which work request.
					if re.Field == "" && r.Check.Chain != "in_batch" {
						t.Errorf("%v names no field", err)
					}
					if c := r.Check.Chain; c != "" && c != "in_batch" && re.WR < 0 && mlx.Funcs[re.Func].Kind == mlx.KindBuilder {
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

func errnoOf(name string) syscall.Errno {
	switch name {
	case "EINVAL":
		return syscall.EINVAL
	case "ENOMEM":
		return syscall.ENOMEM
	case "EOPNOTSUPP":
		return syscall.EOPNOTSUPP
	case "EBADF":
		return syscall.EBADF
	}
	return 0
}

// example runs one example of a rule.
type example struct {
	t    *testing.T
	res  *gen.Result
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
		x.fill(reflect.ValueOf(v).Elem(), c.Struct, n)
		return v.(interface{ Validate() error }).Validate()
	case c.Func != "":
		fn := x.fn(c.Func)
		validate, ok := mlx.ArgValidators[fn]
		if !ok {
			x.t.Fatalf("no argument validator for %s", c.Func)
		}
		args := map[string]any{}
		var dummy [8]byte
		for k, v := range mapping(x.t, n) {
			if v.Kind == yaml.MappingNode {
				args[k] = unsafe.Pointer(&dummy) // a struct or object: any non-NULL pointer
				continue
			}
			args[k] = x.value(v)
		}
		return validate(args)
	}
	return x.chain(n)
}

// fn finds a function by its C name.
func (x *example) fn(name string) mlx.Func {
	for i := range mlx.Funcs {
		if mlx.Funcs[i].Name == name {
			return mlx.Func(i)
		}
	}
	x.t.Fatalf("no function %s in generated/mlx5dv", name)
	return 0
}

// mapping returns a mapping node's entries in order.
func mapping(t *testing.T, n *yaml.Node) map[string]*yaml.Node {
	if n.Kind != yaml.MappingNode {
		t.Fatalf("line %d: want a mapping", n.Line)
	}
	m := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		m[n.Content[i].Value] = n.Content[i+1]
	}
	return m
}

func orderedKeys(n *yaml.Node) []string {
	var k []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k = append(k, n.Content[i].Value)
	}
	return k
}

// value reads a number, a constant name, true/false, or a list of
// constants (OR-ed).
func (x *example) value(n *yaml.Node) uint64 {
	switch n.Kind {
	case yaml.SequenceNode:
		var v uint64
		for _, e := range n.Content {
			v |= x.value(e)
		}
		return v
	case yaml.MappingNode:
		return 1 // an object: any non-NULL pointer
	case yaml.ScalarNode:
		s := n.Value
		if n.Tag == "!!null" {
			return 0
		}
		switch s {
		case "true":
			return 1
		case "false":
			return 0
		case "UINT64_MAX":
			return ^uint64(0)
		case "UINT32_MAX":
			return 0xffffffff
		}
		if v, err := strconv.ParseUint(strings.ReplaceAll(s, "_", ""), 0, 64); err == nil {
			return v
		}
		if v, err := strconv.ParseInt(s, 0, 64); err == nil {
			return uint64(v)
		}
		if k := x.res.C.Constant(s); k != nil {
			return k.ConstValue().Bits
		}
		if isName(s) {
			return 1 // an object by name (ah0, dek0): a non-NULL pointer
		}
		x.t.Fatalf("line %d: %q is not a number or a constant", n.Line, s)
	}
	x.t.Fatalf("line %d: want a value", n.Line)
	return 0
}

// fill sets the fields of a mirror from a mapping keyed by C field names.
func (x *example) fill(v reflect.Value, cname string, n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		return // null, or {}: zero values
	}
	for _, key := range orderedKeys(n) {
		val := mapping(x.t, n)[key]
		goName := model.Camel(key)
		if strings.Contains(key, ".") || v.FieldByName(goName) == (reflect.Value{}) {
			// A union member: through its setter.
			set := v.Addr().MethodByName("Set" + goName)
			if !set.IsValid() {
				x.t.Fatalf("line %d: struct %s has no field %s", val.Line, cname, key)
			}
			at := set.Type().In(0)
			if val.Tag == "!!null" {
				continue
			}
			if at.Kind() == reflect.Pointer {
				p := reflect.New(at.Elem())
				x.fill(p.Elem(), key, val)
				set.Call([]reflect.Value{p})
			} else {
				set.Call([]reflect.Value{reflect.ValueOf(x.value(val)).Convert(at)})
			}
			continue
		}
		f := v.FieldByName(goName)
		switch f.Kind() {
		case reflect.Pointer:
			if val.Tag == "!!null" {
				continue
			}
			p := reflect.New(f.Type().Elem())
			x.fill(p.Elem(), key, val)
			f.Set(p)
		case reflect.UnsafePointer:
			// An opaque object (a DEK, an AH): any non-NULL value.
			var dummy [8]byte
			if x.value(val) != 0 {
				f.SetPointer(unsafe.Pointer(&dummy))
			}
		case reflect.Bool:
			f.SetBool(x.value(val) != 0)
		case reflect.Array:
			// bytes, given as a number filling the first element
			f.Index(0).SetUint(x.value(val))
		case reflect.Struct:
			x.fill(f, key, val)
		default:
			f.Set(reflect.ValueOf(x.value(val)).Convert(f.Type()))
		}
	}
}

// isName reports whether s names an object (lower case, like dek0), not a
// constant.
func isName(s string) bool {
	return s != "" && s[0] >= 'a' && s[0] <= 'z'
}

// chain runs a chain example: tests.qp and a list of calls.
func (x *example) chain(n *yaml.Node) error {
	qp, mkeys := x.qp(&x.rule.Tests.QP)
	c := wrcheck.New(qp)
	d := &driver{x: x, c: c, mkeys: mkeys}
	if n.Kind != yaml.SequenceNode {
		x.t.Fatalf("line %d: a chain example is a list of calls", n.Line)
	}
	for _, call := range n.Content {
		if err := d.call(call); err != nil {
			return err
		}
	}
	if c.Err() != nil {
		return c.Err()
	}
	return nil
}

// qp builds the QP of a chain example, with defaults for what it omits.
func (x *example) qp(n *yaml.Node) (*wrcheck.QP, map[string]*wrcheck.Mkey) {
	qp := &wrcheck.QP{
		Type: mlx.QPRC, SendOps: rcSendOps, MlxSendOps: rcMlxSendOps,
		MaxInlineData: 124, MaxSendSGE: 8, MaxMemcpy: 1 << 31,
		CryptoMultiBlock: true,
	}
	mkeys := map[string]*wrcheck.Mkey{}
	if n.Kind == 0 {
		return qp, mkeys
	}
	m := mapping(x.t, n)
	if t := m["type"]; t != nil {
		switch t.Value {
		case "RC":
		case "DCI":
			qp.Type, qp.MlxSendOps = mlx.QPDCI, mlx.MLX5DV_QP_EX_WITH_RAW_WQE|mlx.MLX5DV_QP_EX_WITH_MEMCPY
		case "UC":
			qp.Type = mlx.QPUC
		case "UD":
			qp.Type = mlx.QPUD
		case "XRC_SEND":
			qp.Type = mlx.QPXRCSend
		case "RAW_PACKET":
			qp.Type = mlx.QPRawPacket
		default:
			x.t.Fatalf("line %d: QP type %s", t.Line, t.Value)
		}
	}
	for k, v := range m {
		switch k {
		case "type":
		case "send_ops":
			qp.SendOps = mlx.IbvQpCreateSendOpsFlags(x.value(v))
		case "mlx5_send_ops":
			qp.MlxSendOps = mlx.Mlx5dvQpCreateSendOpsFlags(x.value(v))
		case "max_inline_data":
			qp.MaxInlineData = int(x.value(v))
		case "max_send_sge":
			qp.MaxSendSGE = int(x.value(v))
		case "max_post", "max_send_wr":
			qp.MaxPost = int(x.value(v))
		case "log_num_concurent":
			qp.Streams, qp.LogNumConcurent = true, int(x.value(v))
		case "max_memcpy":
			qp.MaxMemcpy = x.value(v)
		case "single_block_crypto":
			qp.CryptoSingleBlock, qp.CryptoMultiBlock = x.value(v) != 0, x.value(v) == 0
		case "mkey_tag_supported":
			qp.MkeyTagSupported = x.value(v) != 0
		case "mkeys":
			for name, mk := range mapping(x.t, v) {
				mm := mapping(x.t, mk)
				var flags, lkey uint64
				entries := uint64(16)
				if f := mm["flags"]; f != nil {
					flags = x.value(f)
				}
				if e := mm["max_entries"]; e != nil {
					entries = x.value(e)
				}
				if l := mm["lkey"]; l != nil {
					lkey = x.value(l)
				}
				mkeys[name] = wrcheck.NewMkey(uint32(lkey), mlx.Mlx5dvMkeyInitAttrFlags(flags), int(entries))
			}
		default:
			x.t.Fatalf("line %d: unknown qp key %s", v.Line, k)
		}
	}
	return qp, mkeys
}

// driver replays calls on a chain.
type driver struct {
	x       *example
	c       *wrcheck.Chain
	mkeys   map[string]*wrcheck.Mkey
	wrFlags uint32
}

func (d *driver) call(n *yaml.Node) error {
	x := d.x
	name, args := n.Value, map[string]*yaml.Node{}
	if n.Kind == yaml.MappingNode {
		name = n.Content[0].Value
		if a := n.Content[1]; a.Kind == yaml.MappingNode {
			args = mapping(x.t, a)
		} else {
			args["value"] = a
		}
	}
	arg := func(k string, def uint64) uint64 {
		if v := args[k]; v != nil {
			return x.value(v)
		}
		return def
	}
	switch name {
	case "ibv_wr_start":
		return d.c.Start()
	case "ibv_wr_complete":
		_, err := d.c.Complete(mlx.FnIbvWrComplete)
		return err
	case "ibv_wr_abort":
		d.c.Abort()
		return nil
	case "ibv_qp_ex.wr_flags":
		d.wrFlags = uint32(x.value(args["value"]))
		return nil
	case "ibv_qp_ex.wr_id":
		return nil
	}
	fn := x.fn(name)
	info := &mlx.Funcs[fn]
	mkey := func() *wrcheck.Mkey {
		v := args["mkey"]
		if v == nil || d.mkeys[v.Value] == nil {
			x.t.Fatalf("line %d: %s needs mkey: <a name from qp.mkeys>", n.Line, name)
		}
		return d.mkeys[v.Value]
	}
	count := func(list, num string) (int, []*yaml.Node) {
		if v := args[list]; v != nil {
			if v.Kind == yaml.SequenceNode {
				return len(v.Content), v.Content
			}
			return int(x.value(v)), nil
		}
		return int(arg(num, 0)), nil
	}
	switch name {
	case "mlx5dv_wr_mkey_configure":
		attr := &mlx.Mlx5dvMkeyConfAttr{}
		if a := args["attr"]; a != nil {
			x.fill(reflect.ValueOf(attr).Elem(), "attr", a)
		}
		return d.c.MkeyConfigure(fn, d.wrFlags, mkey(), int(arg("num_setters", 0)), attr)
	case "mlx5dv_wr_mr_list":
		k, list := count("sge", "num_sges")
		return d.c.MR(fn, d.wrFlags, mkey(), uint32(arg("access_flags", 0)), k, d.sum(list, "length", uint64(k)*4096), false)
	case "mlx5dv_wr_mr_interleaved":
		k, list := count("data", "num_interleaved")
		return d.c.MR(fn, d.wrFlags, mkey(), uint32(arg("access_flags", 0)), k, arg("repeat_count", 1)*d.sum(list, "bytes_count", uint64(k)*512), true)
	case "mlx5dv_wr_memcpy":
		return d.c.Memcpy(fn, d.wrFlags, arg("length", 64))
	case "mlx5dv_wr_raw_wqe":
		wqe := []byte{0, 0, 0, 8, 0, 0x12, 0x34, 1, 0, 0, 0, 8, 0, 0, 0, 0}
		if v := args["wqe_hex"]; v != nil {
			var err error
			if wqe, err = hex.DecodeString(v.Value); err != nil {
				x.t.Fatalf("line %d: wqe_hex: %v", v.Line, err)
			}
		}
		return d.c.RawWQE(fn, d.wrFlags, wqe)
	}
	if info.Kind == mlx.KindBuilder {
		return d.c.Builder(fn, d.wrFlags)
	}
	switch info.Group {
	case mlx.GroupData:
		var err error
		switch name {
		case "ibv_wr_set_sge":
			err = d.c.Data(fn, 1, 0)
		case "ibv_wr_set_sge_list":
			k, _ := count("sg_list", "num_sge")
			err = d.c.Data(fn, k, 0)
		case "ibv_wr_set_inline_data":
			err = d.c.Data(fn, 0, int(arg("length", 0)))
		case "ibv_wr_set_inline_data_list":
			_, list := count("buf_list", "num_buf")
			err = d.c.Data(fn, 0, int(d.sum(list, "length", arg("length", 0))))
		default:
			err = d.c.Data(fn, 1, 0)
		}
		return err
	case mlx.GroupDcAddr:
		stream := -1
		if v := args["stream_id"]; v != nil {
			stream = int(x.value(v))
		}
		return d.c.DCAddr(fn, stream)
	case mlx.GroupUdAddr, mlx.GroupXrcSrqn:
		return d.c.QPSetter(fn)
	case mlx.GroupAccess:
		return d.c.MkeyAccess(fn, uint32(arg("access_flags", 0)))
	case mlx.GroupLayout:
		if name == "mlx5dv_wr_set_mkey_layout_list" {
			k, list := count("sge", "num_sges")
			return d.c.MkeyLayout(fn, k, d.sum(list, "length", uint64(k)*4096), false)
		}
		k, list := count("data", "num_interleaved")
		return d.c.MkeyLayout(fn, k, arg("repeat_count", 1)*d.sum(list, "bytes_count", uint64(k)*512), true)
	case mlx.GroupSignature:
		attr := &mlx.Mlx5dvSigBlockAttr{}
		if a := args["attr"]; a != nil {
			x.fill(reflect.ValueOf(attr).Elem(), "attr", a)
		}
		return d.c.MkeySigBlock(fn, attr)
	case mlx.GroupCrypto:
		attr := &mlx.Mlx5dvCryptoAttr{}
		if a := args["attr"]; a != nil {
			x.fill(reflect.ValueOf(attr).Elem(), "attr", a)
		}
		return d.c.MkeyCrypto(fn, attr)
	}
	return fmt.Errorf("the test driver does not know how to call %s", name)
}

// sum adds a field over a list of mappings, or returns def without one.
func (d *driver) sum(list []*yaml.Node, field string, def uint64) uint64 {
	if list == nil {
		return def
	}
	var s uint64
	for _, e := range list {
		if v := mapping(d.x.t, e)[field]; v != nil {
			s += d.x.value(v)
		}
	}
	return s
}
