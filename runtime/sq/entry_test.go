package sq_test

import (
	"reflect"
	"sort"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
	"github.com/mlx5gen/mlx5gen/runtime/internal/ruletest"
	"github.com/mlx5gen/mlx5gen/runtime/sq"
)

// An entry point is a public function or method of this package that
// implements C functions of the API. Every rule a C function can break is
// run through every entry point implementing it (TestRulesEveryEntryPoint).
type entryPoint struct {
	funcs []string // the C functions (and ibv_qp_ex attributes) it implements
	form  string   // how the rule examples reach it: formCalls, formBurst, formTemplate, formOneCall, formPost or formPostTemplate
}

const (
	formCalls    = "calls"    // one method per C function
	formBurst    = "burst"    // RDMAWriteBurst: ibv_wr_rdma_write + ibv_wr_set_sge per request
	formTemplate = "template" // NewMkeyTemplate + ConfigureMkey: a whole mkey configuration
	formOneCall  = "onecall"  // RDMAWriteSGE, RDMAReadSGE, SendSGE: a builder and ibv_wr_set_sge
	formPost     = "post"     // PostRDMAWriteSGE, PostRDMAReadSGE, PostSendSGE: a batch of one one-call work request
	// PostConfigureMkey: a batch of one template configuration.
	formPostTemplate = "posttemplate"
)

// forms lists every form.
var forms = []string{formCalls, formBurst, formTemplate, formOneCall, formPost, formPostTemplate}

var entryPoints = map[string]entryPoint{
	"Start":                    {[]string{"ibv_wr_start"}, formCalls},
	"Complete":                 {[]string{"ibv_wr_complete"}, formCalls},
	"Abort":                    {[]string{"ibv_wr_abort"}, formCalls},
	"SetWRID":                  {[]string{"ibv_qp_ex.wr_id"}, formCalls},
	"SetWRFlags":               {[]string{"ibv_qp_ex.wr_flags"}, formCalls},
	"Send":                     {[]string{"ibv_wr_send"}, formCalls},
	"SendImm":                  {[]string{"ibv_wr_send_imm"}, formCalls},
	"SendInv":                  {[]string{"ibv_wr_send_inv"}, formCalls},
	"RDMAWrite":                {[]string{"ibv_wr_rdma_write"}, formCalls},
	"RDMAWriteImm":             {[]string{"ibv_wr_rdma_write_imm"}, formCalls},
	"RDMARead":                 {[]string{"ibv_wr_rdma_read"}, formCalls},
	"AtomicCmpSwp":             {[]string{"ibv_wr_atomic_cmp_swp"}, formCalls},
	"AtomicFetchAdd":           {[]string{"ibv_wr_atomic_fetch_add"}, formCalls},
	"LocalInv":                 {[]string{"ibv_wr_local_inv"}, formCalls},
	"BindMW":                   {[]string{"ibv_wr_bind_mw"}, formCalls},
	"SetSGE":                   {[]string{"ibv_wr_set_sge"}, formCalls},
	"SetSGEList":               {[]string{"ibv_wr_set_sge_list"}, formCalls},
	"SetInlineData":            {[]string{"ibv_wr_set_inline_data"}, formCalls},
	"SetInlineDataList":        {[]string{"ibv_wr_set_inline_data_list"}, formCalls},
	"SetDCAddr":                {[]string{"mlx5dv_wr_set_dc_addr"}, formCalls},
	"SetDCAddrStream":          {[]string{"mlx5dv_wr_set_dc_addr_stream"}, formCalls},
	"Memcpy":                   {[]string{"mlx5dv_wr_memcpy"}, formCalls},
	"RawWQE":                   {[]string{"mlx5dv_wr_raw_wqe"}, formCalls},
	"MkeyConfigure":            {[]string{"mlx5dv_wr_mkey_configure"}, formCalls},
	"SetMkeyAccessFlags":       {[]string{"mlx5dv_wr_set_mkey_access_flags"}, formCalls},
	"SetMkeyLayoutList":        {[]string{"mlx5dv_wr_set_mkey_layout_list"}, formCalls},
	"SetMkeyLayoutInterleaved": {[]string{"mlx5dv_wr_set_mkey_layout_interleaved"}, formCalls},
	"SetMkeySigBlock":          {[]string{"mlx5dv_wr_set_mkey_sig_block"}, formCalls},
	"SetMkeyCrypto":            {[]string{"mlx5dv_wr_set_mkey_crypto"}, formCalls},
	"MRList":                   {[]string{"mlx5dv_wr_mr_list"}, formCalls},
	"MRInterleaved":            {[]string{"mlx5dv_wr_mr_interleaved"}, formCalls},
	"RDMAWriteBurst":           {[]string{"ibv_qp_ex.wr_id", "ibv_wr_rdma_write", "ibv_wr_set_sge"}, formBurst},
	"RDMAWriteSGE":             {[]string{"ibv_wr_rdma_write", "ibv_wr_set_sge"}, formOneCall},
	"PostRDMAWriteSGE":         {[]string{"ibv_wr_start", "ibv_wr_rdma_write", "ibv_wr_set_sge", "ibv_wr_complete"}, formPost},
	"PostRDMAReadSGE":          {[]string{"ibv_wr_start", "ibv_wr_rdma_read", "ibv_wr_set_sge", "ibv_wr_complete"}, formPost},
	"PostSendSGE":              {[]string{"ibv_wr_start", "ibv_wr_send", "ibv_wr_set_sge", "ibv_wr_complete"}, formPost},
	"RDMAReadSGE":              {[]string{"ibv_wr_rdma_read", "ibv_wr_set_sge"}, formOneCall},
	"SendSGE":                  {[]string{"ibv_wr_send", "ibv_wr_set_sge"}, formOneCall},
	"ConfigureMkey": {[]string{"mlx5dv_wr_mkey_configure", "mlx5dv_wr_set_mkey_access_flags",
		"mlx5dv_wr_set_mkey_layout_list", "mlx5dv_wr_set_mkey_sig_block"}, formTemplate},
	"NewMkeyTemplate": {[]string{"mlx5dv_wr_set_mkey_access_flags", "mlx5dv_wr_set_mkey_sig_block"}, formTemplate},
	"PostConfigureMkey": {[]string{"ibv_wr_start", "mlx5dv_wr_mkey_configure", "mlx5dv_wr_set_mkey_access_flags",
		"mlx5dv_wr_set_mkey_layout_list", "mlx5dv_wr_set_mkey_sig_block", "ibv_wr_complete"}, formPostTemplate},
}

// stateMethods are the methods of sq.SQ that implement no C function: the
// writer's state, the CQ poller's report of completions, and Close (the
// writer detached when its QP is destroyed).
var stateMethods = map[string]bool{
	"Chain": true, "CurPost": true, "Head": true, "Outstanding": true, "Completed": true,
	"FmCache": true, "BFOffset": true, "Close": true, "Retire": true, "Acquire": true, "Reset": true,
}

// packageFuncs are the entry points that are functions, not methods (the
// reflection below cannot list them).
var packageFuncs = map[string]any{"NewMkeyTemplate": sq.NewMkeyTemplate}

// notOffered are the builders and setters of RC or DCI the writer does
// not offer yet, with the reason; a QP may be created with their send_ops
// bit, but no method builds them.
var notOffered = map[string]string{
	"ibv_wr_atomic_write": "the writer has no 8-byte atomic write builder yet",
}

// sqTypes are the QP types the writer drives.
const sqTypes = mlx.QPRC | mlx.QPDCI

// TestEntryPointsMapped: every exported method of sq.SQ is an entry point
// mapped to the C functions it implements, or one of the state methods;
// every mapped C function exists; and every builder and setter the
// writer's QP types offer has an entry point. A new method fails here
// until it is mapped, and then runs every rule of its functions.
func TestEntryPointsMapped(t *testing.T) {
	typ := reflect.TypeOf((*sq.SQ)(nil))
	for i := range typ.NumMethod() {
		name := typ.Method(i).Name
		_, isEntry := entryPoints[name]
		switch {
		case isEntry && stateMethods[name]:
			t.Errorf("%s is both an entry point and a state method", name)
		case !isEntry && !stateMethods[name]:
			t.Errorf("method %s is not mapped to the C functions it implements (entryPoints in %s)", name, "entry_test.go")
		}
	}
	for name, e := range entryPoints {
		if _, ok := typ.MethodByName(name); !ok && packageFuncs[name] == nil {
			t.Errorf("entry point %s is neither a method of sq.SQ nor a listed function", name)
		}
		for _, c := range e.funcs {
			if _, ok := ruletest.Fn(c); !ok && c != "ibv_qp_ex.wr_id" && c != "ibv_qp_ex.wr_flags" {
				t.Errorf("entry point %s: no C function %s in generated/mlx5dv", name, c)
			}
		}
	}
	var missing []string
	for i := range mlx5rules.Funcs {
		f := &mlx5rules.Funcs[i]
		if (f.Kind == mlx5rules.KindBuilder || f.Kind == mlx5rules.KindSetter) && f.QPTypes&sqTypes != 0 &&
			len(implementing(f.Name)) == 0 && notOffered[f.Name] == "" {
			missing = append(missing, f.Name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("builders and setters of RC or DCI without an entry point: %v", missing)
	}
	for fn := range notOffered {
		if len(implementing(fn)) > 0 {
			t.Errorf("%s has an entry point now: remove it from notOffered", fn)
		}
	}
}

// implementing returns the entry points implementing C function fn, by
// name.
func implementing(fn string) []string {
	var names []string
	for name, e := range entryPoints {
		for _, c := range e.funcs {
			if c == fn {
				names = append(names, name)
			}
		}
	}
	sort.Strings(names)
	return names
}
