package sim_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	mlx "github.com/mlx5gen/mlx5gen/generated/mlx5dv"
	"github.com/mlx5gen/mlx5gen/generated/mlx5rules"
	"github.com/mlx5gen/mlx5gen/runtime/device"
	"github.com/mlx5gen/mlx5gen/runtime/sim"
	"github.com/mlx5gen/mlx5gen/runtime/sim/engine"
)

// TestXTSEngineModes: the default device reports the multi-block AES-XTS
// engine (and the single-block one, as hardware with both does); one made
// with CryptoMultiBlock false reports the single-block engine alone. In
// both, what the device reports is what it executes: a one-unit message
// under a tweak whose byte order matters (the multi-block engine's BSF
// holds it reversed) is x/crypto/xts's ciphertext for that tweak, so the
// QPs' writers and the device's mkey table agree on the order. Only the
// single-block device refuses a crypto mkey of two data units, with
// libmlx5's rule.
func TestXTSEngineModes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		multi bool
	}{{"sim:xts-engine-multi", true}, {singleBlockDevice(t, "xts-engine-single"), false}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newXTSRig(t, tc.name, false)
			caps := r.c.Info().Caps
			if !caps.Crypto || !caps.CryptoSingleBlock || caps.CryptoMultiBlock != tc.multi {
				t.Fatalf("Caps: Crypto %v, CryptoSingleBlock %v, CryptoMultiBlock %v; want true, true, %v",
					caps.Crypto, caps.CryptoSingleBlock, caps.CryptoMultiBlock, tc.multi)
			}
			const lo, hi = 0x0807_0605_0403_0201, 0
			key := xtsKeys[1]
			plain := xtsPattern(512, 0x77)
			copy(r.mem.Bytes(), plain)
			clear(r.wire.Bytes())
			if err := r.configure(512, nil, r.cryptoAttr(key, true, sigAfterCrypto, mlx.MLX5DV_BLOCK_SIZE_512, lo, hi)); err != nil {
				t.Fatal(err)
			}
			r.write(512)
			if want := xtsUnits(t, key, lo, 512, plain); !bytes.Equal(r.wire.Bytes()[:512], want) {
				t.Fatalf("one data unit under tweak %#x: %s", uint64(lo), xtsDiff(r.wire.Bytes()[:512], want, 512))
			}
			err := r.configure(1024, nil, r.cryptoAttr(key, true, sigAfterCrypto, mlx.MLX5DV_BLOCK_SIZE_512, lo, hi))
			if tc.multi {
				if err != nil {
					t.Fatalf("two data units on the multi-block engine: %v", err)
				}
				r.write(1024)
				return
			}
			var re *mlx.RuleError
			want := mlx5rules.ChainError(mlx5rules.ChainSingleBlock, mlx.FnWRSetMkeyCrypto).Rule
			if !errors.As(err, &re) || re.Rule != want || !strings.Contains(err.Error(), "data_unit_size") {
				t.Fatalf("two data units on the single-block engine: %v, want rule %s", err, want)
			}
			t.Logf("refused: %v", err)
			// The refused batch left the queue usable and the mkey as it
			// was: one data unit still works.
			if err := r.configure(512, nil, r.cryptoAttr(key, true, sigAfterCrypto, mlx.MLX5DV_BLOCK_SIZE_512, lo+1, hi)); err != nil {
				t.Fatal(err)
			}
			r.write(512)
			if want := xtsUnits(t, key, lo+1, 512, plain); !bytes.Equal(r.wire.Bytes()[:512], want) {
				t.Fatalf("after the refusal: %s", xtsDiff(r.wire.Bytes()[:512], want, 512))
			}
		})
	}
}

// TestNewDevice: sim.NewDevice makes a device with the capabilities
// given, which Open then opens and List lists; it refuses a name in use,
// a malformed name and capabilities no device could have, naming the
// field.
func TestNewDevice(t *testing.T) {
	caps := sim.DefaultCaps()
	if !caps.CryptoMultiBlock || engine.DefaultCaps.CryptoMultiBlock {
		t.Fatalf("sim.DefaultCaps().CryptoMultiBlock %v, engine.DefaultCaps' %v: want the multi-block engine on sim devices only",
			caps.CryptoMultiBlock, engine.DefaultCaps.CryptoMultiBlock)
	}
	caps.MaxInlineData = 64
	if _, err := sim.NewDevice("sim:newdevice", caps); err != nil && sim.Fabric().Device("newdevice") == nil {
		t.Fatal(err)
	}
	c, err := device.Open("sim:newdevice")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := c.Info().Caps.MaxInlineData; got != 64 {
		t.Fatalf("the opened device's MaxInlineData %d, want 64", got)
	}
	listed, err := device.List(sim.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range listed {
		found = found || d.Name == "sim:newdevice" && d.Caps.MaxInlineData == 64
	}
	if !found {
		t.Fatalf("List does not list sim:newdevice with its caps: %+v", listed)
	}
	for _, tc := range []struct {
		name string
		caps func(*engine.Caps)
		want string
	}{
		{"newdevice", func(*engine.Caps) {}, "already"},
		{"sim:a/b", func(*engine.Caps) {}, "no spaces or slashes"},
		{"newdevice-0wr", func(c *engine.Caps) { c.MaxQPWR = 0 }, "Caps.MaxQPWR"},
		{"newdevice-streams", func(c *engine.Caps) { c.MaxErrStreams = c.MaxDCIStreams + 1 }, "Caps.MaxErrStreams"},
		{"newdevice-inline", func(c *engine.Caps) { c.MaxInlineData = -1 }, "Caps.MaxInlineData"},
		{"newdevice-msg", func(c *engine.Caps) { c.MaxMsgSize = 0 }, "Caps.MaxMsgSize"},
	} {
		c := sim.DefaultCaps()
		tc.caps(&c)
		if _, err := sim.NewDevice(tc.name, c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewDevice(%q): %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}
