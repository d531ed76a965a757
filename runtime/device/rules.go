package device

import (
	"errors"
	"fmt"
	"syscall"
	"unsafe"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// Every Create, Reg and Modify call of the API runs the generated
// validators of the C function it stands for (mlx5dv_create_qp,
// ibv_modify_qp, ibv_reg_mr, ...) on the C-mirror structs it builds from
// the Go configuration, before any backend sees the call: the rules of the
// man pages hold whichever backend runs it, and a violation is the same
// *mlx5dv.RuleError a program calling the validators itself gets. What the
// man pages do not say but the device's capabilities or the Go types
// decide is a *ConfigError. Both wrap the errno libmlx5 returns for the
// same mistake: EINVAL, or EOPNOTSUPP for a send operation the QP cannot
// carry.

// ConfigError is a value of a configuration the API refuses for a reason
// of the device (its capabilities) or of the Go API rather than a rule of
// a man page: a negative count, a size a C field cannot hold, an object of
// another context. It names the one field that is wrong.
type ConfigError struct {
	Field string // the field or argument: "QPConfig.MaxSendSGE", "maxEntries"
	Value string // the value given; "" when the field's presence is what is wrong
	Why   string // what the field may be, and the limit it broke
	// Errno is what the C call fails with for the same value; 0 means
	// syscall.EINVAL. libmlx5 fails an unsupported send operation with
	// EOPNOTSUPP (mlx5_qp_fill_wr_pfns), so a program testing the errno
	// sees the same on every backend.
	Errno syscall.Errno
}

func (e *ConfigError) Error() string {
	if e.Value == "" {
		return e.Field + ": " + e.Why
	}
	return e.Field + " " + e.Value + ": " + e.Why
}

// Unwrap returns e.Errno, or syscall.EINVAL (what the C calls return for
// an invalid argument) when it is 0, so that errors.Is(err, syscall.EINVAL)
// holds for every refused configuration but an unsupported send operation.
func (e *ConfigError) Unwrap() error {
	if e.Errno != 0 {
		return e.Errno
	}
	return syscall.EINVAL
}

// cfgErr returns the ConfigError of field with value v (nil: no value).
func cfgErr(field string, v any, why string, args ...any) *ConfigError {
	e := &ConfigError{Field: field, Why: fmt.Sprintf(why, args...)}
	if v != nil {
		e.Value = fmt.Sprint(v)
	}
	return e
}

// inRange refuses v outside lo..hi, naming field; limit names hi when it
// comes from the device ("Caps.MaxSGE").
func inRange(field string, v, lo, hi int, limit string) error {
	if v >= lo && v <= hi {
		return nil
	}
	if limit != "" {
		return cfgErr(field, v, "%d to %s %d", lo, limit, hi)
	}
	return cfgErr(field, v, "%d to %d", lo, hi)
}

// capOr is a device limit, or def when the backend does not know it (0).
func capOr(c, def int) int {
	if c > 0 {
		return c
	}
	return def
}

// maxU32 bounds what a C field of 32 bits holds (the sizes of ibv_qp_cap,
// ibv_srq_attr, ibv_cq_init_attr_ex).
const maxU32 = 1<<31 - 1

// InitAttr returns the mlx5dv_qp_init_attr mlx5dv_create_qp(3) gets for
// cfg: comp_mask names what cfg sets (create flags, mlx5 send ops, the DC
// type, DCI streams), as a C program sets it. A DC QP given DCI streams
// gets the DCI_STREAMS bit and the streams in the union, whatever its
// kind, so that the validator sees a DCT given streams (rule
// create_qp.dci_streams.dci_only). The counts are converted unchecked:
// CreateQP checks their ranges first.
func (cfg *QPConfig) InitAttr() mlx.QPInitAttr {
	var dv mlx.QPInitAttr
	if cfg.MlxSendOps != 0 {
		dv.CompMask |= uint64(mlx.MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS)
		dv.SendOpsFlags = uint64(cfg.MlxSendOps)
	}
	if cfg.CreateFlags != 0 {
		dv.CompMask |= uint64(mlx.MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS)
		dv.CreateFlags = cfg.CreateFlags
	}
	if cfg.Kind != DCI && cfg.Kind != DCT {
		return dv
	}
	dv.CompMask |= uint64(mlx.MLX5DV_QP_INIT_ATTR_MASK_DC)
	dv.DCInitAttr.DCType = mlx.MLX5DV_DCTYPE_DCI
	if cfg.Kind == DCT {
		dv.DCInitAttr.DCType = mlx.MLX5DV_DCTYPE_DCT
		dv.DCInitAttr.SetDCTAccessKey(cfg.DCAccessKey)
	}
	if cfg.LogNumConcurent != 0 || cfg.LogNumErrored != 0 {
		dv.CompMask |= uint64(mlx.MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS)
		*dv.DCInitAttr.DCIStreams() = mlx.DCIStreams{LogNumConcurent: uint8(cfg.LogNumConcurent), LogNumErrored: uint8(cfg.LogNumErrored)}
	}
	return dv
}

// ModifyAttr returns the ibv_qp_attr and attr_mask ibv_modify_qp(3) gets
// for moving a QP of kind to state with a: the attributes the page
// requires for the transition (QPAttr lists them).
func ModifyAttr(kind QPKind, state mlx.QPState, a QPAttr) (mlx.QPAttr, mlx.QPAttrMask) {
	attr := mlx.QPAttr{QPState: state}
	mask := mlx.IBV_QP_STATE
	switch state {
	case mlx.IBV_QPS_INIT:
		attr.PortNum, attr.PkeyIndex = 1, a.PKeyIdx
		mask |= mlx.IBV_QP_PORT | mlx.IBV_QP_PKEY_INDEX
		if kind != DCI {
			attr.QPAccessFlags = a.Access
			mask |= mlx.IBV_QP_ACCESS_FLAGS
		}
	case mlx.IBV_QPS_RTR:
		attr.PathMTU = a.MTU
		mask |= mlx.IBV_QP_PATH_MTU
		if kind == DCI {
			break
		}
		attr.AHAttr = AHAttr(a.Remote)
		attr.MinRnrTimer = a.MinRNR
		mask |= mlx.IBV_QP_AV | mlx.IBV_QP_MIN_RNR_TIMER
		if kind == RC {
			attr.DestQPNum, attr.RQPsn, attr.MaxDestRdAtomic = a.Remote.QPN, a.Remote.PSN, a.RdAtomic
			mask |= mlx.IBV_QP_DEST_QPN | mlx.IBV_QP_RQ_PSN | mlx.IBV_QP_MAX_DEST_RD_ATOMIC
		}
	case mlx.IBV_QPS_RTS:
		attr.Timeout, attr.RetryCnt, attr.RnrRetry = a.Timeout, a.Retry, a.RNRRetry
		attr.SQPsn, attr.MaxRdAtomic = a.SQPSN, a.RdAtomic
		mask |= mlx.IBV_QP_TIMEOUT | mlx.IBV_QP_RETRY_CNT | mlx.IBV_QP_RNR_RETRY | mlx.IBV_QP_SQ_PSN | mlx.IBV_QP_MAX_QP_RD_ATOMIC
	}
	return attr, mask
}

// AHAttr is the address of remote as ibv_modify_qp takes it: its LID on
// InfiniBand, its GID (sent from the local GID index 0) when it routes by
// GID (RoCE, or no LID).
func AHAttr(remote Endpoint) mlx.AHAttr {
	a := mlx.AHAttr{Dlid: remote.LID, PortNum: 1}
	if remote.Ethernet || remote.LID == 0 {
		a.IsGlobal = 1
		a.GRH = mlx.GlobalRoute{Dgid: remote.GID, SgidIndex: 0, HopLimit: 64}
	}
	return a
}

// validateModify runs ibv_modify_qp's validators on the transition.
func validateModify(kind QPKind, state mlx.QPState, a QPAttr) error {
	attr, mask := ModifyAttr(kind, state, a)
	if err := mlx.ValidateArgsModifyQP(unsafe.Pointer(&attr), mask); err != nil {
		return named(err)
	}
	return named(attr.Validate())
}

// pdMirror stands for the ibv_pd the C calls get: the API's PD always
// exists, so the rules on a NULL pd hold by construction.
var pdMirror mlx.IBVPD

// validateMkey runs mlx5dv_create_mkey's validators.
func validateMkey(flags mlx.MkeyInitAttrFlags, maxEntries int) error {
	a := mlx.MkeyInitAttr{PD: &pdMirror, CreateFlags: flags, MaxEntries: uint16(maxEntries)}
	return named(a.Validate())
}

// validateDEK runs mlx5dv_dek_create's validators on cfg's init attr: a
// plaintext key, so comp_mask has CRYPTO_LOGIN and crypto_login is NULL
// (mlx5dv_dek_create(3), rule dek.plaintext).
func validateDEK(cfg *DEKConfig) error {
	a := cfg.InitAttr()
	a.PD, a.CompMask = &pdMirror, uint64(mlx.MLX5DV_DEK_INIT_ATTR_CRYPTO_LOGIN)
	return named(a.Validate())
}

// validateCQ runs ibv_create_cq_ex's and mlx5dv_create_cq's validators:
// the CQ's size, and its CQE size through mlx5dv_cq_init_attr.cqe_size.
func validateCQ(cfg CQConfig) error {
	ex := mlx.CQInitAttrEx{CQE: uint32(cfg.CQEs)}
	if err := ex.Validate(); err != nil {
		return named(err)
	}
	dv := mlx.CQInitAttr{CompMask: uint64(mlx.MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE), CQESize: uint16(cfg.CQESize)}
	return named(dv.Validate())
}

// validateSRQ runs ibv_create_srq's validators.
func validateSRQ(cfg SRQConfig) error {
	a := mlx.SRQInitAttr{Attr: mlx.SRQAttr{MaxWR: uint32(cfg.MaxWR), MaxSGE: uint32(cfg.MaxSGE)}}
	if err := mlx.ValidateArgsCreateSRQ(unsafe.Pointer(&a)); err != nil {
		return named(err)
	}
	return named(a.Validate())
}

// goFields names, for each C field or argument a validator reports
// ("struct.field", or the argument alone), the Go field or argument of
// the API it comes from, so that an error names what the caller wrote.
var goFields = map[string]string{
	"mlx5dv_qp_init_attr.create_flags":         "QPConfig.CreateFlags",
	"mlx5dv_qp_init_attr.send_ops_flags":       "QPConfig.MlxSendOps",
	"mlx5dv_qp_init_attr.dc_init_attr.dc_type": "QPConfig.LogNumConcurent and LogNumErrored (DCI streams of a DCT)",
	"mlx5dv_cq_init_attr.cqe_size":             "CQConfig.CQESize",
	"mlx5dv_dek_init_attr.key_size":            "DEKConfig.KeySize",
	"mlx5dv_dek_init_attr.key_purpose":         "DEKConfig.Purpose",
	"mlx5dv_mkey_init_attr.create_flags":       "flags",
	"ibv_qp_attr.qp_state":                     "state",
	"ibv_qp_attr.qp_access_flags":              "QPAttr.Access",
	".access":                                  "access",
	"mlx5dv_dc_init_attr.dc_type":              "QPConfig.Kind",
}

// named prefixes a validator's error with the Go field it comes from
// (goFields); the *mlx5dv.RuleError stays in the chain for errors.As.
func named(err error) error {
	var re *mlx.RuleError
	if err == nil || !errors.As(err, &re) {
		return err
	}
	if n, ok := goFields[re.Struct+"."+re.Field]; ok {
		return fmt.Errorf("%s: %w", n, err)
	}
	return err
}
