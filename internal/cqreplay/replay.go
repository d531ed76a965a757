package cqreplay

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/mlx5gen/mlx5gen/runtime/cq"
	"github.com/mlx5gen/mlx5gen/runtime/qmem"
)

// Outcome is the verdict on one case.
type Outcome struct {
	ID          string
	Err         error    // the first difference, or nil
	Divergences []string // the documented divergences the case was held to
}

// File replays every case of a file.
func Replay(f *File, cases []*Case) []Outcome {
	out := make([]Outcome, 0, len(cases))
	for _, c := range cases {
		o := Outcome{ID: c.ID}
		fc, divs, err := c.following()
		if err == nil {
			o.Divergences = divs
			err = fc.run()
		}
		o.Err = err
		out = append(out, o)
	}
	return out
}

// world is a case's fake objects around the poller.
type world struct {
	c      *Case
	mem    *qmem.Memory
	cq     *cq.CQ
	sqs    map[string]*fakeSQ
	rqs    map[string]*fakeRQ
	srqs   map[string]*fakeSRQ
	mkeys  map[string]*cq.Mkey
	scat   *memory
	scatBy map[string]int
	cqBuf  []byte // what the CQ buffer must hold: the setup and the hardware writes
	log    strings.Builder
}

func (c *Case) build() (*world, error) {
	s := &c.Setup
	w := &world{c: c, sqs: map[string]*fakeSQ{}, rqs: map[string]*fakeRQ{}, srqs: map[string]*fakeSRQ{},
		mkeys: map[string]*cq.Mkey{}, scat: &memory{}, scatBy: map[string]int{}}
	buf, _ := hex.DecodeString(s.CQBufferHex) // checked
	w.cqBuf = append([]byte(nil), buf...)
	dbr, _ := hex.DecodeString(s.CQ.InitialDBRecHex)
	w.mem = &qmem.Memory{CQ: buf, CQESize: s.CQ.CQESz, CQDBR: dbr}
	q, err := cq.New(cq.Config{Mem: w.mem, CQEVersion: s.Context.CQEVersion, ConsIndex: s.CQ.InitialConsIndex,
		DumpFillLKey: s.Context.DumpFillMkey, Scatter: w.scat, Log: w.logf})
	if err != nil {
		return nil, err
	}
	w.cq = q
	for i, b := range s.ScatterBuffers {
		w.scat.addr = append(w.scat.addr, b.Addr)
		w.scat.buf = append(w.scat.buf, bytes.Repeat([]byte{b.InitialFill}, b.Length))
		w.scatBy[b.Name] = i
	}
	for i := range s.SRQs {
		r := &s.SRQs[i]
		f := newFakeSRQ(r)
		f.db = r.Counter
		w.srqs[r.Name] = f
		if s.Context.CQEVersion == 0 {
			if err := q.AddSRQ(r.SRQN, f); err != nil {
				return nil, err
			}
		}
	}
	for i := range s.QPs {
		if err := w.addQP(&s.QPs[i]); err != nil {
			return nil, err
		}
	}
	for i := range s.Mkeys {
		m := &s.Mkeys[i]
		mk := &cq.Mkey{NoContext: m.Sig == nil}
		if m.Sig != nil {
			mk.Mem, mk.Wire = sigKind(m.Sig.Mem), sigKind(m.Sig.Wire)
			mk.ErrCount, mk.ErrExists, mk.ErrCountUpdated = m.Sig.ErrCount, m.Sig.ErrExists, m.Sig.ErrCountUpdated
		}
		w.mkeys[m.Name] = mk
		if err := q.AddMkey(m.MkeyIndex, mk); err != nil {
			return nil, err
		}
	}
	return w, nil
}

func (w *world) addQP(p *QP) error {
	qp := &cq.QP{QPN: p.QPN, RC: p.QPType.Value == 2, RxCsum: p.QPCapCache.Value&rxCsumValid != 0}
	if p.UIdx != nil {
		qp.UIdx = *p.UIdx
	}
	if p.SQ != nil {
		f := newFakeSQ(p.SQ)
		w.sqs[p.Name] = f
		qp.SQ = f
	}
	if p.RQ != nil && p.RQ.WQECnt != 0 {
		f := newFakeRQ(p.RQ)
		w.rqs[p.Name] = f
		if p.SRQ == "" {
			qp.RQ = f
		}
	}
	if p.SRQ != "" {
		qp.SRQ = w.srqs[p.SRQ]
	}
	return w.cq.AddQP(qp)
}

// rxCsumValid is MLX5_RX_CSUM_VALID in qp_cap_cache (providers/mlx5/mlx5.h).
const rxCsumValid = 1 << 16

// sigKind maps a domain's libmlx5 signature type and CRC type.
func sigKind(d SigDomain) cq.SigKind {
	switch d.SigType.Value {
	case 2:
		return cq.SigT10DIF
	case 1:
		if d.CRCType != nil {
			switch d.CRCType.Value {
			case 1:
				return cq.SigCRC32C
			case 2:
				return cq.SigCRC64XP10
			}
		}
		return cq.SigCRC32
	}
	return cq.SigNone
}

// logf writes what libmlx5 writes to its debug file.
func (w *world) logf(ev cq.LogEvent, b []byte) {
	switch ev {
	case cq.LogErrorCQE:
		fmt.Fprintf(&w.log, "mlx5: %s: got completion with error:\n", w.c.Setup.Context.Hostname)
		for i := 0; i < 64; i += 16 {
			fmt.Fprintf(&w.log, "%08x %08x %08x %08x\n", be32(b[i:]), be32(b[i+4:]), be32(b[i+8:]), be32(b[i+12:]))
		}
	case cq.LogScatterQPType:
		w.log.WriteString("scatter to CQE is supported only for RC QPs\n")
	case cq.LogScatterOpcode:
		fmt.Fprintf(&w.log, "scatter to CQE for opcode %d\n", be32(b)&0xff)
	}
}

func be32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// sentinel is a doorbell record libmlx5 cannot write (its SET_CI has
// 24 bits), to see whether a call wrote it.
var sentinel = []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

func (c *Case) run() error {
	w, err := c.build()
	if err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	for i := range c.Calls {
		call := &c.Calls[i]
		at := fmt.Sprintf("calls[%d] %s", i, call.Fn)
		if call.Fn == "(hardware) write CQE" {
			b, _ := hex.DecodeString(call.Hex)
			copy(w.mem.CQ[call.Slot*len(b):], b)
			copy(w.cqBuf[call.Slot*len(b):], b)
			continue
		}
		prev := append([]byte(nil), w.mem.CQDBR...)
		copy(w.mem.CQDBR, sentinel)
		w.log.Reset()
		if err := w.call(call); err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
		for _, name := range sortedKeys(w.srqs) {
			if err := w.srqs[name].err; err != nil {
				return fmt.Errorf("%s: srqs[%s]: %w", at, name, err)
			}
		}
		setCI := !bytes.Equal(w.mem.CQDBR[0:4], sentinel[0:4])
		arm := !bytes.Equal(w.mem.CQDBR[4:8], sentinel[4:8])
		if !setCI {
			copy(w.mem.CQDBR[0:4], prev[0:4])
		}
		if !arm {
			copy(w.mem.CQDBR[4:8], prev[4:8])
		}
		if err := w.after(call.After, setCI, arm); err != nil {
			return fmt.Errorf("%s: after.%w", at, err)
		}
	}
	return nil
}

var errUnknown *cq.UnknownError

func (w *world) call(c *Call) error {
	switch c.Fn {
	case "ibv_poll_cq":
		return w.poll(c)
	case "ibv_start_poll", "ibv_next_poll":
		return w.lazy(c)
	case "ibv_end_poll":
		w.cq.EndPoll()
		return nil
	case "mlx5dv_mkey_check":
		return w.mkeyCheck(c)
	}
	return errors.New("unknown call")
}
