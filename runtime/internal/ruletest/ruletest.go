// Package ruletest reads the good and bad examples of the rules in spec/api
// for the tests of the runtime: the work-request state machine
// (runtime/internal/wrcheck) runs them on its checks, the send-queue writer
// (runtime/sq) through every public entry point. It loads the spec and the
// header model the committed generated/mlx5dv comes from, and turns the
// examples' YAML (numbers, constant names, nested structs) into values.
package ruletest

import (
	"reflect"
	"slices"
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
	"github.com/mlx5gen/mlx5gen/gen/vocab"
	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
	"github.com/mlx5gen/mlx5gen/internal/rdmacore"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
	specfiles "github.com/mlx5gen/mlx5gen/spec"
)

// Committed is the release generated/mlx5dv is generated from.
const Committed = "44.0"

var (
	once   sync.Once
	result *gen.Result
	genErr error
)

// Load generates the model of the committed release once.
func Load(t testing.TB) *gen.Result {
	t.Helper()
	once.Do(func() {
		root, err := rdmacore.IncludeRoot(".", Committed)
		if err != nil {
			genErr = err
			return
		}
		result, genErr = gen.Generate(gen.Config{IncludeRoot: root, Spec: specfiles.FS})
	})
	if genErr != nil {
		t.Fatal(genErr)
	}
	return result
}

// Enforced returns the rules with examples that apply to the committed
// release, in spec order, but for the receive-queue rules (Receive): the
// work-request chain and the send queue run these.
func Enforced(res *gen.Result) []*spec.Rule {
	var rs []*spec.Rule
	for _, r := range res.Spec.Rules {
		if r.Tests != nil && r.Gate.Includes(Committed) && !IsReceive(r) {
			rs = append(rs, r)
		}
	}
	return rs
}

// IsReceive says whether a rule is checked by the receive-queue writer
// (runtime/rq) rather than the work-request chain: its check is one of
// the receive checks.
func IsReceive(r *spec.Rule) bool {
	return r.Check != nil && slices.Contains(vocab.ReceiveChecks, r.Check.Chain)
}

// Receive returns the receive-queue rules with examples that apply to the
// committed release, in spec order; runtime/rq runs them.
func Receive(res *gen.Result) []*spec.Rule {
	var rs []*spec.Rule
	for _, r := range res.Spec.Rules {
		if r.Tests != nil && r.Gate.Includes(Committed) && IsReceive(r) {
			rs = append(rs, r)
		}
	}
	return rs
}

// Errno maps an errno name of the spec to its value.
func Errno(name string) syscall.Errno {
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

// Fn finds a function of generated/mlx5dv by its C name.
func Fn(name string) (mlx.Func, bool) {
	for i := range mlx5rules.Funcs {
		if mlx5rules.Funcs[i].Name == name {
			return mlx.Func(i), true
		}
	}
	return 0, false
}

// Values reads example values against the header model.
type Values struct {
	T   testing.TB
	Res *gen.Result
}

// Mapping returns a mapping node's entries.
func (x Values) Mapping(n *yaml.Node) map[string]*yaml.Node {
	if n.Kind != yaml.MappingNode {
		x.T.Fatalf("line %d: want a mapping", n.Line)
	}
	m := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		m[n.Content[i].Value] = n.Content[i+1]
	}
	return m
}

// Keys returns a mapping node's keys in order.
func Keys(n *yaml.Node) []string {
	var k []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k = append(k, n.Content[i].Value)
	}
	return k
}

// IsNull reports whether n is YAML's null.
func IsNull(n *yaml.Node) bool { return n != nil && n.Tag == "!!null" }

// Value reads a number, a constant name, true/false, or a list of
// constants (OR-ed); a mapping or an object's name is a non-NULL pointer (1).
func (x Values) Value(n *yaml.Node) uint64 {
	switch n.Kind {
	case yaml.SequenceNode:
		var v uint64
		for _, e := range n.Content {
			v |= x.Value(e)
		}
		return v
	case yaml.MappingNode:
		return 1
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
		if k := x.Res.C.Constant(s); k != nil {
			return k.ConstValue().Bits
		}
		if isName(s) {
			return 1 // an object by name (ah0, dek0): a non-NULL pointer
		}
		x.T.Fatalf("line %d: %q is not a number or a constant", n.Line, s)
	}
	x.T.Fatalf("line %d: want a value", n.Line)
	return 0
}

// isName reports whether s names an object (lower case, like dek0), not a
// constant.
func isName(s string) bool {
	return s != "" && s[0] >= 'a' && s[0] <= 'z'
}

// Fill sets the fields of a mirror from a mapping keyed by C field names;
// opaque pointers (a DEK, an AH) point at obj, a zeroed object large
// enough for any of them.
func (x Values) Fill(v reflect.Value, cname string, n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		return // null, or {}: zero values
	}
	m := x.Mapping(n)
	for _, key := range Keys(n) {
		val := m[key]
		goName := model.MemberName(key)
		if strings.Contains(key, ".") || v.FieldByName(goName) == (reflect.Value{}) {
			x.fillUnion(v, cname, key, goName, val)
			continue
		}
		f := v.FieldByName(goName)
		switch f.Kind() {
		case reflect.Pointer:
			if IsNull(val) {
				continue
			}
			p := reflect.New(f.Type().Elem())
			x.Fill(p.Elem(), key, val)
			f.Set(p)
		case reflect.UnsafePointer:
			if x.Value(val) != 0 {
				f.SetPointer(unsafe.Pointer(new([64]byte)))
			}
		case reflect.Bool:
			f.SetBool(x.Value(val) != 0)
		case reflect.Array:
			// bytes, given as a number filling the first element
			f.Index(0).SetUint(x.Value(val))
		case reflect.Struct:
			x.Fill(f, key, val)
		default:
			f.Set(reflect.ValueOf(x.Value(val)).Convert(f.Type()))
		}
	}
}

// fillUnion sets a union member through its setter.
func (x Values) fillUnion(v reflect.Value, cname, key, goName string, val *yaml.Node) {
	set := v.Addr().MethodByName("Set" + goName)
	if !set.IsValid() {
		x.T.Fatalf("line %d: struct %s has no field %s", val.Line, cname, key)
	}
	at := set.Type().In(0)
	if IsNull(val) {
		return
	}
	if at.Kind() == reflect.Pointer {
		p := reflect.New(at.Elem())
		x.Fill(p.Elem(), key, val)
		set.Call([]reflect.Value{p})
		return
	}
	set.Call([]reflect.Value{reflect.ValueOf(x.Value(val)).Convert(at)})
}

// QP builds the QP of a chain example (tests.qp), with defaults for what
// it omits, and its mkeys by name.
func (x Values) QP(n *yaml.Node) (*sq.QP, map[string]*sq.Mkey) {
	qp := &sq.QP{
		Type: mlx.QPRC,
		SendOps: mlx.IBV_QP_EX_WITH_RDMA_WRITE | mlx.IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | mlx.IBV_QP_EX_WITH_SEND |
			mlx.IBV_QP_EX_WITH_SEND_WITH_IMM | mlx.IBV_QP_EX_WITH_RDMA_READ | mlx.IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
			mlx.IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | mlx.IBV_QP_EX_WITH_LOCAL_INV | mlx.IBV_QP_EX_WITH_BIND_MW |
			mlx.IBV_QP_EX_WITH_SEND_WITH_INV,
		MlxSendOps: mlx.MLX5DV_QP_EX_WITH_MR_INTERLEAVED | mlx.MLX5DV_QP_EX_WITH_MR_LIST |
			mlx.MLX5DV_QP_EX_WITH_MKEY_CONFIGURE | mlx.MLX5DV_QP_EX_WITH_RAW_WQE | mlx.MLX5DV_QP_EX_WITH_MEMCPY,
		MaxInlineData: 124, MaxSendSGE: 8, MaxMemcpy: 1 << 31,
		CryptoMultiBlock: true,
	}
	mkeys := map[string]*sq.Mkey{}
	if n.Kind == 0 {
		return qp, mkeys
	}
	m := x.Mapping(n)
	if t := m["type"]; t != nil {
		x.qpType(qp, t)
	}
	for k, v := range m {
		switch k {
		case "type":
		case "send_ops":
			qp.SendOps = mlx.IBVQPCreateSendOpsFlags(x.Value(v))
		case "mlx5_send_ops":
			qp.MlxSendOps = mlx.QPCreateSendOpsFlags(x.Value(v))
		case "max_inline_data":
			qp.MaxInlineData = int(x.Value(v))
		case "max_send_sge":
			qp.MaxSendSGE = int(x.Value(v))
		case "max_post", "max_send_wr":
			qp.MaxPost = int(x.Value(v))
		case "log_num_concurent":
			qp.Streams, qp.LogNumConcurent = true, int(x.Value(v))
		case "max_memcpy":
			qp.MaxMemcpy = x.Value(v)
		case "max_msg_sz":
			qp.MaxMsgSize = x.Value(v)
		case "single_block_crypto":
			qp.CryptoSingleBlock, qp.CryptoMultiBlock = x.Value(v) != 0, x.Value(v) == 0
		case "mkey_tag_supported":
			qp.MkeyTagSupported = x.Value(v) != 0
		case "mkeys":
			for name, mk := range x.Mapping(v) {
				mkeys[name] = x.Mkey(mk)
			}
		default:
			x.T.Fatalf("line %d: unknown qp key %s", v.Line, k)
		}
	}
	return qp, mkeys
}

func (x Values) qpType(qp *sq.QP, t *yaml.Node) {
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
		x.T.Fatalf("line %d: QP type %s", t.Line, t.Value)
	}
}

// Mkey makes an mkey from {flags, max_entries, lkey} (16 entries by
// default).
func (x Values) Mkey(n *yaml.Node) *sq.Mkey {
	mm := x.Mapping(n)
	var flags, lkey uint64
	entries := uint64(16)
	if f := mm["flags"]; f != nil {
		flags = x.Value(f)
	}
	if e := mm["max_entries"]; e != nil {
		entries = x.Value(e)
	}
	if l := mm["lkey"]; l != nil {
		lkey = x.Value(l)
	}
	return sq.NewMkey(uint32(lkey), mlx.MkeyInitAttrFlags(flags), int(entries))
}

// Sum adds a field over a list of mappings, or returns def without one.
func (x Values) Sum(list []*yaml.Node, field string, def uint64) uint64 {
	if list == nil {
		return def
	}
	var s uint64
	for _, e := range list {
		if v := x.Mapping(e)[field]; v != nil {
			s += x.Value(v)
		}
	}
	return s
}

// The send operations the tests' QPs are created with: every builder of
// ibv_wr_post(3) and of mlx5dv_wr_post(3) on an RC QP.
const (
	RCSendOps = mlx.IBV_QP_EX_WITH_RDMA_WRITE | mlx.IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | mlx.IBV_QP_EX_WITH_SEND |
		mlx.IBV_QP_EX_WITH_SEND_WITH_IMM | mlx.IBV_QP_EX_WITH_RDMA_READ | mlx.IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
		mlx.IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | mlx.IBV_QP_EX_WITH_LOCAL_INV | mlx.IBV_QP_EX_WITH_BIND_MW |
		mlx.IBV_QP_EX_WITH_SEND_WITH_INV
	RCMlxSendOps = mlx.MLX5DV_QP_EX_WITH_MR_INTERLEAVED | mlx.MLX5DV_QP_EX_WITH_MR_LIST |
		mlx.MLX5DV_QP_EX_WITH_MKEY_CONFIGURE | mlx.MLX5DV_QP_EX_WITH_RAW_WQE | mlx.MLX5DV_QP_EX_WITH_MEMCPY
)
