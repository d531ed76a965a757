//go:build amd64 || arm64 || riscv64 || ppc64le || ppc64 || s390x || loong64 || mips64 || mips64le

package mlx5dv_test

import (
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// wantViolation checks that err breaks rule with errno, on field, and that
// its text names the parts given.
func wantViolation(t *testing.T, err error, rule string, errno syscall.Errno, field string, parts ...string) {
	t.Helper()
	var re *mlx5dv.RuleError
	if !errors.As(err, &re) || re.Rule != rule || !errors.Is(err, errno) || re.Field != field {
		t.Fatalf("got %v, want rule %s (%v) on %s", err, rule, errno, field)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%q does not name %q", err.Error(), p)
		}
	}
}

// TestDCIStreams: the streams bit needs the DC bit and a DCI; a DCT's
// access key, 0 included, is valid without it.
func TestDCIStreams(t *testing.T) {
	const (
		dc      = uint64(mlx5dv.MLX5DV_QP_INIT_ATTR_MASK_DC)
		streams = uint64(mlx5dv.MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS)
	)
	a := mlx5dv.QPInitAttr{CompMask: streams}
	wantViolation(t, a.Validate(), "create_qp.dci_streams.needs_dc", syscall.EINVAL, "comp_mask",
		"mlx5dv_create_qp: mlx5dv_qp_init_attr.comp_mask 0x8", "lacks 0x2 (MLX5DV_QP_INIT_ATTR_MASK_DC)")

	a = mlx5dv.QPInitAttr{CompMask: dc | streams}
	a.DCInitAttr.DCType = mlx5dv.MLX5DV_DCTYPE_DCT
	a.DCInitAttr.SetDCTAccessKey(0x1234)
	wantViolation(t, a.Validate(), "create_qp.dci_streams.dci_only", syscall.EINVAL, "dc_init_attr.dc_type",
		"dc_init_attr.dc_type 0x1 (MLX5DV_DCTYPE_DCT) is none of the values allowed")

	for name, ok := range map[string]mlx5dv.QPInitAttr{
		"DCT key 0":         {CompMask: dc, DCInitAttr: mlx5dv.DCInitAttr{DCType: mlx5dv.MLX5DV_DCTYPE_DCT}},
		"DCI with streams":  {CompMask: dc | streams, DCInitAttr: mlx5dv.DCInitAttr{DCType: mlx5dv.MLX5DV_DCTYPE_DCI}},
		"DCI, no streams":   {CompMask: dc, DCInitAttr: mlx5dv.DCInitAttr{DCType: mlx5dv.MLX5DV_DCTYPE_DCI}},
		"zero value":        {},
		"streams bits only": {CompMask: uint64(mlx5dv.MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS)},
	} {
		if err := ok.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestDmabufFD: dmabuf_fd without MLX5DV_UMEM_MASK_DMABUF is a forgotten
// bit; with it, a negative descriptor is EBADF; the zero value is valid.
func TestDmabufFD(t *testing.T) {
	dmabuf := uint64(mlx5dv.MLX5DV_UMEM_MASK_DMABUF)
	u := mlx5dv.DevxUmemIn{DmabufFd: 7}
	wantViolation(t, u.Validate(), "umem.in.dmabuf_fd.mask", syscall.EINVAL, "dmabuf_fd", "dmabuf_fd 0x7 is not 0")
	u = mlx5dv.DevxUmemIn{CompMask: dmabuf, DmabufFd: -1}
	wantViolation(t, u.Validate(), "umem.in.dmabuf_fd.negative", syscall.EBADF, "dmabuf_fd", "dmabuf_fd -1 is negative")
	for _, ok := range []mlx5dv.DevxUmemIn{{}, {CompMask: dmabuf}, {CompMask: dmabuf, DmabufFd: 5}} {
		if err := ok.Validate(); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
}

// TestValidateIntoNoAllocations: the Into forms report a violation
// without allocating, and Validate allocates only to return one.
func TestValidateIntoNoAllocations(t *testing.T) {
	var e mlx5dv.RuleError
	u := mlx5dv.DevxUmemIn{CompMask: uint64(mlx5dv.MLX5DV_UMEM_MASK_DMABUF), DmabufFd: -1}
	good := mlx5dv.DevxUmemIn{}
	n := testing.AllocsPerRun(100, func() {
		if u.ValidateInto(&e) || !good.ValidateInto(&e) || good.Validate() != nil {
			t.Fatal("wrong verdict")
		}
		if mlx5dv.ValidateArgsWRSetMkeyAccessFlagsInto(&e, mlx5dv.IBV_ACCESS_RELAXED_ORDERING) {
			t.Fatal("RELAXED_ORDERING accepted")
		}
	})
	if n != 0 {
		t.Errorf("%v allocations", n)
	}
	if e.Rule != "mkey_configure.access_flags" || e.WR != -1 || e.Func != mlx5dv.FnWRSetMkeyAccessFlags {
		t.Errorf("filled %+v", e)
	}
}
