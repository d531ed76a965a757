package cqe

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// vecFile is the part of a testdata/cqe-vectors file this test reads.
type vecFile struct {
	Cases []struct {
		ID    string
		Setup struct {
			CQ struct {
				NCQE  int `json:"ncqe"`
				CQESz int `json:"cqe_sz"`
			}
			CQEs []struct {
				Index  int
				Stale  bool
				Fields map[string]json.RawMessage
			}
			CQBufferHex string `json:"cq_buffer_hex"`
		}
	}
}

// field reads a number, or the value of an {value, name} enum.
func field(f map[string]json.RawMessage, name string) uint64 {
	raw, ok := f[name]
	if !ok {
		return 0
	}
	var n uint64
	if json.Unmarshal(raw, &n) == nil {
		return n
	}
	var e struct{ Value uint64 }
	json.Unmarshal(raw, &e)
	return e.Value
}

// unmodelled are the bytes of each layout a simulated device does not
// produce (reserved bytes, timestamps, VLAN and checksum offload fields,
// the CQE signature): they are taken from the vector before comparing.
var unmodelled = map[mlx.CQEOpcode][][2]int{
	mlx.MLX5_CQE_REQ:      {{0, 22}, {28, 32}, {40, 44}, {48, 56}, {62, 63}},
	mlx.MLX5_CQE_REQ_ERR:  {{0, 32}, {36, 54}, {62, 63}},
	mlx.MLX5_CQE_SIG_ERR:  {{0, 16}, {48, 63}},
	mlx.MLX5_CQE_RESP_ERR: {{0, 32}, {36, 54}, {62, 63}},
}

// TestVectors writes every CQE of the reference vectors that a device
// writes for a work request (requester and responder successes without
// inline scatter, error and signature-error CQEs) with this package, from
// the vector's decoded fields, and compares the bytes with the CQE
// libmlx5's poller was run on.
func TestVectors(t *testing.T) {
	files, _ := filepath.Glob("../../../testdata/cqe-vectors/*.json")
	if len(files) == 0 {
		t.Fatal("no CQE vectors")
	}
	n := 0
	for _, name := range files {
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var v vecFile
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, c := range v.Cases {
			if c.ID == "req_ignored_cqe_fields" {
				continue // garbage in fields a requester CQE does not carry, to show the poller ignores it
			}
			buf, _ := hex.DecodeString(c.Setup.CQBufferHex)
			size, ncqe := c.Setup.CQ.CQESz, c.Setup.CQ.NCQE
			for _, e := range c.Setup.CQEs {
				want := buf[(e.Index%ncqe)*size+size-64:][:64]
				got, ok := writeLike(e.Fields, ncqe, size, e.Index%ncqe)
				if e.Stale || !ok {
					continue
				}
				op := mlx.CQEOpcode(field(e.Fields, "opcode"))
				skip := unmodelled[op]
				if skip == nil {
					skip = [][2]int{{0, 22}, {28, 32}, {40, 44}, {48, 56}, {56, 57}, {62, 63}}
				}
				for _, r := range skip {
					copy(got[r[0]:r[1]], want[r[0]:r[1]])
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s %s CQE %d (%v):\n got %x\nwant %x", filepath.Base(name), c.ID, e.Index, op, got, want)
				}
				n++
			}
		}
	}
	t.Logf("%d CQEs written byte for byte", n)
	if n < 100 {
		t.Errorf("only %d CQEs compared", n)
	}
}

// writeLike writes the CQE the fields describe with a Ring whose producer
// index puts it at slot with the vector's owner bit; false: a CQE this
// package does not write (inline scatter, resize, no-packet, invalid).
func writeLike(f map[string]json.RawMessage, ncqe, size, slot int) ([]byte, bool) {
	op := mlx.CQEOpcode(field(f, "opcode"))
	if field(f, "format") != 0 {
		return nil, false
	}
	mem := make([]byte, ncqe*size)
	r, err := New(mem, size, make([]byte, 8))
	if err != nil {
		panic(err)
	}
	r.pi = uint32(slot) + uint32(field(f, "owner"))*uint32(ncqe)
	be.PutUint32(r.dbr, r.pi) // the poller is caught up
	qpn := uint32(field(f, "qpn"))
	ctr := uint16(field(f, "wqe_counter"))
	switch op {
	case mlx.MLX5_CQE_REQ:
		r.Req(qpn, uint32(field(f, "srqn_uidx")), mlx.Opcode(field(f, "wqe_opcode")), ctr, uint32(field(f, "byte_cnt")))
	case mlx.MLX5_CQE_RESP_SEND, mlx.MLX5_CQE_RESP_SEND_IMM, mlx.MLX5_CQE_RESP_SEND_INV, mlx.MLX5_CQE_RESP_WR_IMM:
		r.Resp(&Resp{Op: op, QPN: qpn, SRQN: uint32(field(f, "srqn_uidx")), Ctr: ctr, ByteCnt: uint32(field(f, "byte_cnt")),
			Imm: uint32(field(f, "imm_inval_pkey")), SrcQP: uint32(field(f, "rqpn")), SLID: uint16(field(f, "slid")),
			SL: uint8(field(f, "sl")), G: uint8(field(f, "g")), SE: field(f, "se") != 0})
	case mlx.MLX5_CQE_REQ_ERR, mlx.MLX5_CQE_RESP_ERR:
		r.Err(&Err{Resp: op == mlx.MLX5_CQE_RESP_ERR, QPN: qpn, SRQN: uint32(field(f, "srqn_uidx")),
			Op: mlx.Opcode(field(f, "s_wqe_opcode")), Ctr: ctr, Syndrome: mlx.CQESyndrome(field(f, "syndrome")),
			Vendor: uint8(field(f, "vendor_err_synd"))})
	case mlx.MLX5_CQE_SIG_ERR:
		r.Sig(&Sig{Syndrome: uint16(field(f, "syndrome")), ExpectedSig: uint32(field(f, "expected_trans_sig")),
			ActualSig: uint32(field(f, "actual_trans_sig")), ExpectedRef: uint32(field(f, "expected_ref_tag")),
			ActualRef: uint32(field(f, "actual_ref_tag")), SigType: uint8(field(f, "sig_type")),
			Domain: uint8(field(f, "domain")), Mkey: uint32(field(f, "mkey")), Offset: field(f, "sig_err_offset")})
	default:
		return nil, false
	}
	return mem[slot*size+size-64:][:64], true
}
