// Package vectors reads the reference WQE vectors: JSON files recording the
// exact bytes rdma-core's libmlx5 writes for sequences of work-request
// calls (testdata/vectors/README.md). mlx5gen replays them through its own
// builders and compares.
package vectors

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
)

// File is one vector file.
type File struct {
	Path     string `json:"-"`
	RdmaCore any    `json:"rdma_core"`
	Family   string `json:"family"`
	Cases    []Case `json:"cases"`

	// CrossCheck names the newer rdma-core commit the cases were re-run
	// on (cross_check.newest.describe, "v64.0-61-g691953d8d").
	CrossCheck struct {
		Newest struct {
			Describe string `json:"describe"`
		} `json:"newest"`
	} `json:"cross_check"`
}

// NewestRelease is the rdma-core release of the cross-check commit
// ("64.0"), or "" if the file does not say.
func (f *File) NewestRelease() string {
	m := releaseRE.FindStringSubmatch(f.CrossCheck.Newest.Describe)
	if m == nil {
		return ""
	}
	return m[1]
}

var releaseRE = regexp.MustCompile(`^v?([0-9]+\.[0-9]+)`)

// Case is one recorded call sequence.
type Case struct {
	ID          string  `json:"id"`
	Description string  `json:"description"`
	Notes       any     `json:"notes"`
	Setup       Setup   `json:"setup"`
	Calls       []Call  `json:"calls"`
	Result      Result  `json:"result"`
	AtNewest    *Result `json:"result_at_newest_commit"`
	SetupNewest *Setup  `json:"setup_at_newest_commit"`

	// NewestRelease is the file's NewestRelease: the release
	// result_at_newest_commit was recorded with.
	NewestRelease string `json:"-"`
}

// Setup is the fake QP, device and objects before the first call.
type Setup struct {
	QPType string `json:"qp_type"`
	QPNum  uint32 `json:"qp_num"`
	Device Device `json:"device_context"`
	Caps   Caps   `json:"create_caps"`
	SQ     SQ     `json:"sq"`
	BF     BF     `json:"bf"`
	PD     PD     `json:"pd"`
	Mkeys  []Mkey `json:"mkeys"`
	AHs    []AH   `json:"ahs"`
	DEKs   []DEK  `json:"deks"`
	// Memory regions and windows for ibv_wr_bind_mw, kept as objects:
	// replay reads the fields it needs (name, lkey, rkey) by name.
	MRs []Args `json:"mrs"`
	MWs []Args `json:"mws"`
}

// DCI reports whether the QP is a DC initiator.
func (s *Setup) DCI() bool { return len(s.QPType) >= 3 && s.QPType[:3] == "DCI" }

// Device is what the builders read of the device context.
type Device struct {
	MaxSQDescSz            int    `json:"max_sq_desc_sz"`
	MkeyUpdateTagSupported bool   `json:"mkey_update_tag_supported"`
	CryptoEngines          Flags  `json:"crypto_engines"`
	DMAMMOMaxSize          uint64 `json:"dma_mmo_max_size"`
	PreferBF               int    `json:"prefer_bf"`
	ShutUpBF               int    `json:"shut_up_bf"`
}

// Caps are the ibv_qp_init_attr_ex caps given at creation.
type Caps struct {
	MaxSendWR     int   `json:"max_send_wr"`
	MaxSendSGE    int   `json:"max_send_sge"`
	MaxInlineData int   `json:"max_inline_data"`
	SQSigAll      int   `json:"sq_sig_all"`
	SendOps       Flags `json:"send_ops_flags"`
	Mlx5SendOps   Flags `json:"mlx5_send_ops_flags"`
}

// SQ is the send queue libmlx5 sized from the caps.
type SQ struct {
	WQEBBCount     int    `json:"wqebb_count"`
	WQEBBSize      int    `json:"wqebb_size"`
	MaxWQESize     int    `json:"max_wqe_size"`
	MaxPost        int    `json:"max_post"`
	MaxGS          int    `json:"max_gs"`
	MaxInlineData  int    `json:"max_inline_data"`
	SQSignalBits   uint8  `json:"sq_signal_bits"`
	InitialCurPost uint32 `json:"initial_cur_post"`
	InitialHead    uint32 `json:"initial_head"`
	InitialTail    uint32 `json:"initial_tail"`
	InitialFmCache uint8  `json:"initial_fm_cache"`
	WQSig          int    `json:"wq_sig"`
}

// BF is the BlueFlame register.
type BF struct {
	UUARN         int `json:"uuarn"`
	BufSize       int `json:"buf_size"`
	InitialOffset int `json:"initial_offset"`
	NeedLock      int `json:"need_lock"`
}

// PD holds the opaque MR memcpy's metadata segment points at.
type PD struct {
	OpaqueMRLKey  uint32 `json:"opaque_mr_lkey"`
	OpaqueBufAddr uint64 `json:"opaque_buf_addr"`
}

// Mkey is an indirect mkey of the setup.
type Mkey struct {
	Name       string     `json:"name"`
	LKey       uint32     `json:"lkey"`
	RKey       uint32     `json:"rkey"`
	MaxEntries int        `json:"max_entries"`
	NumDesc    int        `json:"num_desc"`
	Signature  *SigCtx    `json:"signature"`
	Crypto     *CryptoCtx `json:"crypto"`
}

// SigCtx is an mkey's signature context.
type SigCtx struct {
	MemPSV          uint32 `json:"mem_psv_index"`
	WirePSV         uint32 `json:"wire_psv_index"`
	ErrCount        uint32 `json:"err_count"`
	ErrCountUpdated bool   `json:"err_count_updated"`
	BlockState      string `json:"block_state"`
}

// CryptoCtx is an mkey's crypto context.
type CryptoCtx struct {
	State string `json:"state"`
}

// AH is an address handle: the address vector a DCI WQE carries.
type AH struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	AVHex string `json:"mlx5_wqe_av_hex"`
}

// DEK is a data encryption key object.
type DEK struct {
	Name         string `json:"name"`
	DevxObjectID uint32 `json:"devx_object_id"`
}

// Flags is a flag argument {value, names}.
type Flags struct {
	Value uint64   `json:"value"`
	Names []string `json:"names"`
}

// Call is one API call and its arguments.
type Call struct {
	Fn    string                     `json:"fn"`
	Args  map[string]json.RawMessage `json:"args"`
	Trace struct {
		CurPostAfter      *uint32 `json:"sq_cur_post_after"`
		PendingErrorAfter *int    `json:"pending_error_after"`
		Returned          *int    `json:"returned"`
	} `json:"trace"`
}

// Result is what the calls produced.
type Result struct {
	Batches []Batch `json:"batches"`
	Final   struct {
		CurPost uint32 `json:"sq_cur_post"`
		Mkeys   []struct {
			Name               string  `json:"name"`
			Length             uint64  `json:"length"`
			SigBlockState      *string `json:"sig_block_state"`
			SigErrCountUpdated *bool   `json:"sig_err_count_updated"`
			CryptoState        *string `json:"crypto_state"`
		} `json:"mkeys"`
	} `json:"final"`
}

// Batch is one ibv_wr_start..complete.
type Batch struct {
	Calls         [2]int    `json:"calls"`
	EndedBy       string    `json:"ended_by"`
	Return        int       `json:"return"`
	ReturnName    string    `json:"return_name"`
	Posted        bool      `json:"posted"`
	CurPostBefore uint32    `json:"sq_cur_post_before"`
	CurPostBuilt  uint32    `json:"sq_cur_post_built"`
	CurPostAfter  uint32    `json:"sq_cur_post_after"`
	WQEs          []WQE     `json:"wqes"`
	SlotsWritten  []Slot    `json:"ring_slots_written"`
	DBR           DBR       `json:"doorbell_record"`
	BFWrites      []BFWrite `json:"bf_writes"`
	BFOffsetAfter int       `json:"bf_offset_after"`
	FmCacheAfter  uint8     `json:"fm_cache_after"`
}

// WQE is one posted WQE.
type WQE struct {
	ProducerIndex uint32  `json:"producer_index"`
	FirstSlot     int     `json:"first_slot"`
	WQEBBCount    int     `json:"wqebb_count"`
	Slots         []int   `json:"slots"`
	Wraps         bool    `json:"wraps"`
	DsBytes       int     `json:"ds_bytes"`
	Hex           string  `json:"hex"`
	Unwritten     []Range `json:"unwritten_ranges"`
	Bookkeeping   struct {
		WRID    uint64 `json:"wr_id"`
		WRData  uint32 `json:"wr_data"`
		WQEHead uint32 `json:"wqe_head"`
	} `json:"bookkeeping"`
}

// Slot is a ring slot a rejected batch wrote.
type Slot struct {
	Slot      int     `json:"slot"`
	Hex       string  `json:"hex"`
	Unwritten []Range `json:"unwritten_ranges"`
}

// Range is a byte range [0] to [1] (exclusive) of a hex buffer.
type Range [2]int

// DBR is the doorbell record after a batch.
type DBR struct {
	Written   bool    `json:"written"`
	SendHex   string  `json:"send_dbr_hex"`
	SendValue *uint32 `json:"send_dbr_value"`
}

// BFWrite is one write to the BlueFlame register.
type BFWrite struct {
	Offset    int     `json:"offset"`
	Length    int     `json:"length"`
	Hex       string  `json:"hex"`
	Unwritten []Range `json:"copied_unwritten_ranges"`
}

// Load reads a vector file and checks it (Check): a file that is not
// JSON, holds more than one document, is larger than MaxFileSize or
// holds a case the replay could not run in full is an error naming the
// file, the line and column or the case and field.
func Load(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return Read(path, fh)
}

// Read is Load from a reader; name names it in errors.
func Read(name string, r io.Reader) (*File, error) {
	data, err := ReadLimited(name, r, MaxFileSize)
	if err != nil {
		return nil, err
	}
	var f File
	if err := Decode(name, data, &f); err != nil {
		return nil, err
	}
	f.Path = name
	for i := range f.Cases {
		f.Cases[i].NewestRelease = f.NewestRelease()
	}
	if err := f.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &f, nil
}

// Bytes decodes a hex string.
func Bytes(s string) ([]byte, error) { return hex.DecodeString(s) }

// Args reads a call's arguments.
type Args map[string]json.RawMessage

// Has reports whether the argument is present and not null.
func (a Args) Has(name string) bool {
	r, ok := a[name]
	return ok && string(r) != "null"
}

// Uint reads a number, or the value of a {value, ...} flag or enum, or a
// bool (1 or 0).
func (a Args) Uint(name string) (uint64, error) {
	return Uint(a[name])
}

// Uint decodes a number, a {value, ...} flag or enum, or a bool.
func Uint(r json.RawMessage) (uint64, error) {
	s := string(bytes.TrimSpace(r))
	switch s {
	case "", "null":
		return 0, fmt.Errorf("missing value")
	case "true":
		return 1, nil
	case "false":
		return 0, nil
	}
	if s[0] == '{' {
		var v struct {
			Value json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(r, &v); err != nil {
			return 0, err
		}
		return Uint(v.Value)
	}
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return n, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return uint64(n), err
}

// String reads a string argument (an object's name).
func (a Args) String(name string) (string, error) {
	var s string
	err := json.Unmarshal(a[name], &s)
	return s, err
}

// Object reads an object argument.
func (a Args) Object(name string) (Args, error) {
	if !a.Has(name) {
		return nil, nil
	}
	var o Args
	err := json.Unmarshal(a[name], &o)
	return o, err
}

// List reads a list of objects.
func (a Args) List(name string) ([]Args, error) {
	if !a.Has(name) {
		return nil, nil
	}
	var l []Args
	err := json.Unmarshal(a[name], &l)
	return l, err
}

// Hex reads a hex buffer argument (name_hex).
func (a Args) Hex(name string) ([]byte, error) {
	s, err := a.String(name)
	if err != nil {
		return nil, err
	}
	return hex.DecodeString(s)
}

// ReleaseAtMost reports whether rdma-core release a ("61.0") is b or
// earlier; a release that does not parse is never at most another. Replay
// uses it to decide whether a vector's newer commit already has the
// behaviour a rule follows.
func ReleaseAtMost(a, b string) bool {
	var am, an, bm, bn int
	if _, err := fmt.Sscanf(a, "%d.%d", &am, &an); err != nil {
		return false
	}
	if _, err := fmt.Sscanf(b, "%d.%d", &bm, &bn); err != nil {
		return false
	}
	return am < bm || am == bm && an <= bn
}
