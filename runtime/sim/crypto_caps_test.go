package sim

import (
	"testing"

	"github.com/mlx5gen/mlx5gen/runtime/device"
)

// TestCryptoEngineFlagsAgree: the AES-XTS engine the device reports
// (device.Caps), the one its QPs' writers are built for (sq.QP, whose
// CryptoMultiBlock byte-reverses the tweak and lifts wrcheck's
// single-block limit) and the one its mkey table executes (the order it
// reads the tweak in) are the same, for a default device and for one
// made single-block.
func TestCryptoEngineFlagsAgree(t *testing.T) {
	single := DefaultCaps()
	single.CryptoMultiBlock = false
	if Fabric().Device("flags-single") == nil {
		if _, err := NewDevice("flags-single", single); err != nil {
			t.Fatal(err)
		}
	}
	for name, multi := range map[string]bool{"sim:flags-multi": true, "sim:flags-single": false} {
		bc, err := backend{}.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		c := bc.(*simCtx)
		caps := c.Info().Caps
		pd, err := c.AllocPD()
		if err != nil {
			t.Fatal(err)
		}
		q, err := c.CreateCQ(device.CQConfig{CQEs: 4}, nil)
		if err != nil {
			t.Fatal(err)
		}
		qp, err := pd.CreateQP(device.QPConfig{Kind: device.RC, MaxSendWR: 4, MaxSendSGE: 1}, q, q, nil)
		if err != nil {
			t.Fatal(err)
		}
		w := qp.Memory().QP
		table := c.d.Mkeys().CryptoMultiBlock
		if !caps.CryptoSingleBlock || !w.CryptoSingleBlock || caps.CryptoMultiBlock != multi || w.CryptoMultiBlock != multi ||
			c.d.Caps().CryptoMultiBlock != multi || table != multi {
			t.Errorf("%s: reported single %v multi %v, writers single %v multi %v, engine caps multi %v, mkey table multi %v; want multi %v everywhere, single always",
				name, caps.CryptoSingleBlock, caps.CryptoMultiBlock, w.CryptoSingleBlock, w.CryptoMultiBlock, c.d.Caps().CryptoMultiBlock, table, multi)
		}
		for _, err := range []error{qp.Close(), q.Close(), pd.Close()} {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}
