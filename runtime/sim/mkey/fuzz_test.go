package mkey

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
)

// zeroMem serves any key: fresh zero bytes, up to 1 MiB an access.
type zeroMem struct{}

func (zeroMem) Bytes(key uint32, addr, n uint64, write, remote bool) ([]byte, error) {
	if n > 1<<20 {
		return nil, &Fault{Kind: FaultBounds, Key: key, Addr: addr, N: n}
	}
	return make([]byte, n), nil
}

// fuzzTable has the vectors' mkey (index 0x123, signature, crypto or
// not, PSVs 257 and 258, 16 entries) and their DEK.
func fuzzTable(crypto bool) *Table {
	t := NewTable(zeroMem{})
	flags := mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE
	if crypto {
		flags |= mlx.MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO
	}
	t.mkeys[0x123] = &mkey{index: 0x123, numDesc: 16, free: true, memPSV: 257, wirePSV: 258, ownPSVs: true, flags: flags}
	t.psvs[257], t.psvs[258] = &psv{}, &psv{}
	t.deks[11259375] = &dek{key: make([]byte, 32)}
	return t
}

// FuzzExecUMR feeds mutated UMR and SET_PSV WQEs (seeded with libmlx5's)
// to a table, then moves data both ways through the mkey: errors, never
// panics; a rejected WQE changes nothing.
func FuzzExecUMR(f *testing.F) {
	for _, name := range []string{"sig_block.json", "crypto.json", "mr_interleaved.json", "mkey_configure.json"} {
		raw, err := os.ReadFile("../../../testdata/vectors/" + name)
		if err != nil {
			f.Fatal(err)
		}
		var vf vecFile
		if err := json.Unmarshal(raw, &vf); err != nil {
			f.Fatal(err)
		}
		for _, c := range vf.Cases {
			for _, b := range c.Result.Batches {
				for _, w := range b.WQEs {
					if wqe, err := hex.DecodeString(w.Hex); err == nil && len(wqe) > 3 && (wqe[3] == 0x25 || wqe[3] == 0x20) {
						f.Add(wqe)
					}
				}
			}
		}
	}
	f.Add([]byte{})
	f.Add(make([]byte, 16))
	f.Fuzz(func(t *testing.T, wqe []byte) {
		for _, crypto := range []bool{false, true} {
			fuzzOne(t, fuzzTable(crypto), wqe)
		}
	})
}

// fuzzOne executes one WQE and, if it is accepted, transfers through the mkey.
func fuzzOne(t *testing.T, tab *Table, wqe []byte) {
	before := *tab.mkeys[0x123]
	var err error
	if len(wqe) > 3 && wqe[3] == 0x20 {
		err = tab.ExecSetPSV(wqe)
	} else {
		err = tab.ExecUMR(wqe)
	}
	if err != nil {
		m := tab.mkeys[0x123]
		if m.free != before.free || m.length != before.length || m.sig != before.sig || m.crypto != before.crypto {
			t.Fatalf("a rejected WQE (%v) changed the mkey", err)
		}
		return
	}
	m := tab.mkeys[0x123]
	key := m.key()
	n := min(m.length, 8192)
	out, _ := tab.Gather(key, m.start, n, false, nil)
	tab.Scatter(key, m.start, out, true)
	tab.Scatter(key, m.start, make([]byte, n), false)
	tab.SigError(key)
}
