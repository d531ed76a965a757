package cqreplay

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
)

// Case is one recorded call sequence.
type Case struct {
	ID            string                        `json:"id"`
	Description   string                        `json:"description"`
	Setup         Setup                         `json:"setup"`
	Calls         []Call                        `json:"calls"`
	DifferencesAt map[string][]map[string]Value `json:"differences_at"`

	file *File
	tree any // the case as decoded, for following a later release
}

// Value is a JSON value kept as it was written.
type Value = json.RawMessage

// Setup is the state of the fake objects before the first call.
type Setup struct {
	Context struct {
		CQEVersion   int    `json:"cqe_version"`
		DumpFillMkey uint32 `json:"dump_fill_mkey"`
		Hostname     string `json:"hostname"`
	} `json:"context"`
	CQ struct {
		API              string `json:"api"`
		NCQE             int    `json:"ncqe"`
		CQESz            int    `json:"cqe_sz"`
		InitialConsIndex uint32 `json:"initial_cons_index"`
		InitialDBRecHex  string `json:"initial_dbrec_hex"`
	} `json:"cq"`
	QPs            []QP            `json:"qps"`
	SRQs           []SRQ           `json:"srqs"`
	Mkeys          []Mkey          `json:"mkeys"`
	ScatterBuffers []ScatterBuffer `json:"scatter_buffers"`
	CQBufferHex    string          `json:"cq_buffer_hex"`
}

// QP is a fake QP: its send queue's bookkeeping and receive queue.
type QP struct {
	Name       string  `json:"name"`
	QPN        uint32  `json:"qpn"`
	UIdx       *uint32 `json:"uidx"`
	QPType     Enum    `json:"qp_type"`
	QPCapCache Enum    `json:"qp_cap_cache"`
	SRQ        string  `json:"srq"`
	SQ         *SQ     `json:"sq"`
	RQ         *RQ     `json:"rq"`
}

// SQ is a send queue's bookkeeping (sq.wrid, sq.wqe_head, sq.wr_data).
type SQ struct {
	WQECnt int    `json:"wqe_cnt"`
	Tail   uint32 `json:"tail"`
	Slots  []struct {
		Slot    int    `json:"slot"`
		WRID    uint64 `json:"wrid"`
		WQEHead uint32 `json:"wqe_head"`
		WRData  uint32 `json:"wr_data"`
	} `json:"slots"`
	WQEs []struct {
		Slots []HexAt `json:"slots"`
	} `json:"wqes"`
}

// HexAt is the bytes of one slot.
type HexAt struct {
	Slot int    `json:"slot"`
	Hex  string `json:"hex"`
}

// RQ is a receive queue.
type RQ struct {
	WQECnt   int      `json:"wqe_cnt"`
	WQEShift int      `json:"wqe_shift"`
	Tail     uint32   `json:"tail"`
	WQSig    int      `json:"wq_sig"`
	WRID     []uint64 `json:"wrid"`
	WQEs     []HexAt  `json:"wqes"`
}

// SRQ is a shared receive queue.
type SRQ struct {
	Name      string   `json:"name"`
	SRQN      uint32   `json:"srqn"`
	Max       int      `json:"max"`
	WQEShift  int      `json:"wqe_shift"`
	MaxGS     int      `json:"max_gs"`
	Head      int      `json:"head"`
	Tail      int      `json:"tail"`
	WaitqHead int      `json:"waitq_head"`
	Counter   uint32   `json:"counter"`
	WRID      []uint64 `json:"wrid"`
	BufferHex string   `json:"buffer_hex"`
}

// Mkey is an mkey with its signature context (nil: none).
type Mkey struct {
	Name      string `json:"name"`
	MkeyIndex uint32 `json:"mkey_index"`
	Sig       *struct {
		Mem             SigDomain `json:"mem"`
		Wire            SigDomain `json:"wire"`
		ErrCount        uint32    `json:"err_count"`
		ErrExists       bool      `json:"err_exists"`
		ErrCountUpdated bool      `json:"err_count_updated"`
	} `json:"sig"`
}

// SigDomain is a domain's signature type.
type SigDomain struct {
	SigType Enum  `json:"sig_type"`
	CRCType *Enum `json:"crc_type"`
}

// ScatterBuffer is a destination of inline scatter.
type ScatterBuffer struct {
	Name        string `json:"name"`
	Addr        uint64 `json:"addr"`
	Length      int    `json:"length"`
	InitialFill uint8  `json:"initial_fill"`
}

// Call is one call and what was observed after it.
type Call struct {
	Fn           string             `json:"fn"`
	NumEntries   int                `json:"num_entries"`
	Returned     Value              `json:"returned"`
	WC           []map[string]Value `json:"wc"`
	AttrCompMask uint64             `json:"attr_comp_mask"`
	CQEx         map[string]Value   `json:"cq_ex"`
	Reads        map[string]Value   `json:"reads"`
	Mkey         string             `json:"mkey"`
	ErrInfo      map[string]Value   `json:"err_info"`
	Slot         int                `json:"slot"`
	Hex          string             `json:"hex"`
	After        *After             `json:"after"`
}

// After is the state after a call.
type After struct {
	ConsIndex    uint32 `json:"cons_index"`
	DBRecHex     string `json:"dbrec_hex"`
	SetCIWritten bool   `json:"dbrec_set_ci_written"`
	ArmWritten   bool   `json:"dbrec_arm_written"`
	QPs          []struct {
		Name   string  `json:"name"`
		SQTail *uint32 `json:"sq_tail"`
		RQTail *uint32 `json:"rq_tail"`
	} `json:"qps"`
	SRQs []struct {
		Name        string `json:"name"`
		Head        int    `json:"head"`
		Tail        int    `json:"tail"`
		Counter     uint32 `json:"counter"`
		DBHex       string `json:"db_hex"`
		ChangedWQEs []struct {
			WQEIndex int    `json:"wqe_index"`
			Hex      string `json:"hex"`
		} `json:"changed_wqes"`
		WRID []uint64 `json:"wrid"`
	} `json:"srqs"`
	Mkeys []struct {
		Name            string `json:"name"`
		ErrCount        uint32 `json:"err_count"`
		ErrExists       bool   `json:"err_exists"`
		ErrCountUpdated bool   `json:"err_count_updated"`
		ErrInfo         *struct {
			Syndrome uint16 `json:"syndrome"`
			Expected uint64 `json:"expected"`
			Actual   uint64 `json:"actual"`
			Offset   uint64 `json:"offset"`
			SigType  uint8  `json:"sig_type"`
			Domain   uint8  `json:"domain"`
		} `json:"err_info"`
	} `json:"mkeys"`
	ScatterBuffers []struct {
		Name string `json:"name"`
		Hex  string `json:"hex"`
	} `json:"scatter_buffers"`
	Log               string `json:"log"`
	CQBufferUnchanged bool   `json:"cq_buffer_unchanged"`
}

// decodeCase decodes a case and keeps its tree.
func decodeCase(f *File, raw json.RawMessage) (*Case, error) {
	c := &Case{file: f}
	if err := strictDecode(raw, c); err != nil {
		return c, err
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&c.tree); err != nil {
		return c, err
	}
	return c, nil
}

func strictDecode(raw []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	return d.Decode(v)
}

// num decodes a number or the value of a {value, name} object; ok false
// for null or a missing value.
func num(v Value) (n int64, ok bool, err error) {
	s := string(bytes.TrimSpace(v))
	switch {
	case s == "" || s == "null":
		return 0, false, nil
	case s[0] == '{':
		var e struct {
			Value Value `json:"value"`
		}
		if err := json.Unmarshal(v, &e); err != nil {
			return 0, false, err
		}
		return num(e.Value)
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return int64(u), true, nil
	}
	n, err = strconv.ParseInt(s, 10, 64)
	return n, err == nil, err
}

// decodeHex decodes a hex string of exactly n bytes (n < 0: any length).
func decodeHex(what, s string, n int) ([]byte, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if n >= 0 && len(b) != n {
		return nil, fmt.Errorf("%s: %d bytes, want %d", what, len(b), n)
	}
	return b, nil
}
